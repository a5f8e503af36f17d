// The course site's own script (no dependencies).
(function () {
  // 1. The ipywidgets HTML manager typesets widget labels with MathJax 2's API
  //    (MathJax.Hub.Queue); the site loads MathJax 3. Give it a Hub that calls MathJax 3.
  function hub() {
    return {
      Queue: function (job) {
        var element = job && job[2];
        var mj = window.MathJax;
        if (!mj || !mj.typesetPromise) return;
        var ready = mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
        ready.then(function () { return mj.typesetPromise(element ? [element] : undefined); });
      },
    };
  }
  var config = (window.MathJax = window.MathJax || {});
  config.Hub = config.Hub || hub();
  config.startup = config.startup || {};
  var ready = config.startup.ready;
  // MathJax 3 replaces the global object when it starts: add the Hub to the new one too.
  config.startup.ready = function () {
    if (ready) ready(); else window.MathJax.startup.defaultReady();
    if (!window.MathJax.Hub) window.MathJax.Hub = hub();
  };

  // 2. A widget's picture is an <img> that the HTML manager draws from the saved state, where
  //    the notebook kept the figure's alt text (mhsa_helpers.ui.widgets.Picture.alt). Walk each
  //    shown widget's children in order, as the manager draws them, and give each <img> its text.
  var state = null;
  function widgetState() {
    if (state === null) {
      var tag = document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]');
      try { state = tag ? JSON.parse(tag.textContent).state || {} : {}; } catch (e) { state = {}; }
    }
    return state;
  }
  function pictures(id, found) {
    var model = widgetState()[id];
    if (!model) return found;
    var s = model.state || {};
    if (model.model_name === "ImageModel") found.push(s.alt || "");
    (s.children || []).forEach(function (child) {
      pictures(String(child).replace(/^IPY_MODEL_/, ""), found);
    });
    (s.outputs || []).forEach(function (output) {
      var view = output.data && output.data["application/vnd.jupyter.widget-view+json"];
      if (view) pictures(view.model_id, found);
    });
    return found;
  }
  function widgetAlt() {
    var views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]');
    views.forEach(function (tag) {
      var area = tag.previousElementSibling;
      if (!area || !area.classList.contains("widget-subarea")) return;
      var images = area.querySelectorAll("img");
      if (!images.length) return;
      var id;
      try { id = JSON.parse(tag.textContent).model_id; } catch (e) { return; }
      var alts = pictures(id, []);
      images.forEach(function (img, i) {
        if (!img.getAttribute("alt") && alts[i]) img.setAttribute("alt", alts[i]);
      });
    });
  }
  function start() {
    if (window.MathJax && !window.MathJax.Hub) window.MathJax.Hub = hub();
    if (!document.querySelector('script[type="application/vnd.jupyter.widget-view+json"]')) return;
    widgetAlt();
    new MutationObserver(widgetAlt).observe(document.body, { childList: true, subtree: true });
  }
  // 3. Lesson 07's static explorer (tools/build_site.py): pictures drawn at build time for a
  //    grid of slider values; moving a slider shows the picture, alt text and message for the
  //    chosen values. No kernel, no widget manager.
  function staticExplorers() {
    document.querySelectorAll(".static-explorer").forEach(function (box) {
      if (box.dataset.ready) return;
      box.dataset.ready = "1";
      var frames = JSON.parse(box.dataset.frames);
      var heads = box.querySelector("input.se-heads");
      var dropout = box.querySelector("input.se-dropout");
      var img = box.querySelector("img.se-picture");
      var message = box.querySelector(".se-message");
      function show() {
        var h = JSON.parse(heads.dataset.values)[+heads.value];
        var d = JSON.parse(dropout.dataset.values)[+dropout.value];
        var frame = frames.filter(function (f) { return f.heads === h && f.dropout === d; })[0];
        if (!frame) return;
        box.querySelector(".se-heads-value").textContent = String(h);
        box.querySelector(".se-dropout-value").textContent = d.toFixed(1);
        img.src = frame.src;
        img.alt = frame.alt;
        message.textContent = frame.message;
      }
      heads.addEventListener("input", show);
      dropout.addEventListener("input", show);
    });
  }
  function startAll() { start(); staticExplorers(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startAll);
  else startAll();
})();
