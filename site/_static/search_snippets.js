// The search page's snippets, from each page's readable text (site/conf.py appends this file to
// _static/search_texts.js, after MHSA_SEARCH_TEXTS, and adds that script to the search page
// only). Sphinx's searchtools.js fetches every result's page to cut its snippet: the text it
// would find there holds code, printed tensors, diagram labels and TeX source, and from file://
// the browser refuses the fetch (no snippet at all). Its fetch of a page of this edition is
// answered here with that page's text, written at build time from the doctree Sphinx indexed;
// Sphinx then cuts, anchors and highlights the snippet as usual. Any other request is left alone.
(function () {
  if (typeof window.fetch !== "function" || window.fetch.mhsaSearchTexts) return;
  var texts = typeof MHSA_SEARCH_TEXTS === "object" ? MHSA_SEARCH_TEXTS : {};
  var network = window.fetch;
  function pageOf(resource) {
    var url = typeof resource === "string" ? resource : resource && resource.url;
    if (!url) return null;
    var root = new URL(document.documentElement.dataset.content_root || "./", location.href);
    var target = new URL(url, location.href);
    if (target.origin !== root.origin || target.pathname.indexOf(root.pathname) !== 0) return null;
    var name = decodeURIComponent(target.pathname.slice(root.pathname.length));
    name = name.replace(/\.html$/, "");
    return Object.prototype.hasOwnProperty.call(texts, name) ? name : null;
  }
  var fetchText = function (resource, init) {
    var name = pageOf(resource);
    if (name === null) return network.apply(this, arguments);
    return Promise.resolve(
      new Response(texts[name], { headers: { "Content-Type": "text/html; charset=utf-8" } }),
    );
  };
  fetchText.mhsaSearchTexts = true;
  window.fetch = fetchText;
})();
