// The course site's own script (no dependencies). A widget's picture is an <img> that the
// ipywidgets HTML manager draws from the saved state; the notebook gave it the figure's alt text
// as its tooltip (mhsa_helpers.ui.widgets.show_figure), so copy that into alt.
(function () {
  function altFromTooltip(root) {
    root.querySelectorAll("img.widget-image, .widget-image img, .jupyter-widgets img").forEach(function (img) {
      if (!img.getAttribute("alt")) {
        var text = img.getAttribute("title") || (img.closest("[title]") || {}).title;
        if (text) img.setAttribute("alt", text);
      }
    });
  }
  function start() {
    altFromTooltip(document);
    new MutationObserver(function () { altFromTooltip(document); }).observe(document.body, {
      childList: true, subtree: true, attributes: true, attributeFilter: ["title", "src"],
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
