// The Chinese edition's query splitter, appended by site/conf.py to this edition's
// language_data.js, which the search page loads before Sphinx's searchtools.js (that file keeps a
// splitQuery defined here). Sphinx segments the pages with jieba at build time (site/conf.py
// teaches jieba the glossary's terms first) and drops one-character words but the glossary's; a
// query typed in the browser arrives unsegmented ("多头注意力"), so it matched no indexed word.
// Each run of Chinese
// characters is cut here, longest word first, into the words the index itself holds; the rest
// of the query is split as Sphinx splits it.
var splitQuery = function (query) {
  var han = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/gu;
  var index = (typeof Search !== "undefined" && Search._index) || {};
  var known = function (word) {
    return (
      (index.terms && Object.prototype.hasOwnProperty.call(index.terms, word)) ||
      (index.titleterms && Object.prototype.hasOwnProperty.call(index.titleterms, word))
    );
  };
  var cut = function (run) {
    var words = [];
    var i = 0;
    while (i < run.length) {
      var j = run.length;
      while (j > i + 1 && !known(run.slice(i, j))) j -= 1;
      if (j > i + 1 || known(run[i])) {
        words.push(run.slice(i, j)); // one character only where the index keeps it (熵, 键)
        i = j;
      } else {
        i += 1; // a character the index does not hold on its own
      }
    }
    return words.length ? words : [run]; // nothing known: the run as typed (finds nothing)
  };
  var terms = [];
  // A one-letter word ("k" of "top-k") is never in the index either; as a required term it
  // would hide every page (searchtools.js wants each term matched), so it is left out.
  var push = function (word) {
    if (word.length > 1 || known(word.toLowerCase())) terms.push(word);
  };
  query
    .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)
    .filter(function (term) { return term; })
    .forEach(function (term) {
      var last = 0;
      term.replace(han, function (run, at) {
        if (at > last) push(term.slice(last, at));
        terms.push.apply(terms, cut(run));
        last = at + run.length;
        return run;
      });
      if (last < term.length) push(term.slice(last));
    });
  return terms;
};
