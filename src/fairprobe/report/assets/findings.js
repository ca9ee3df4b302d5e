/* fairprobe report: the findings view. Data arrives as FP.index(...) and FP.chunk([k, ...]) calls
   inline, or from report-findings/*.js loaded by script elements (fetch() of file:// is refused by
   browsers), where chunks come as FP.chunkz(k, "base64 of gzip JSON") and are inflated with
   DecompressionStream. Text is only ever assigned with textContent; "<br />" in dataset text becomes a line
   break and bare formatting tags are dropped, nothing else is interpreted. */
(function () {
  "use strict";
  var FP = (window.FP = {});
  var idx = null, chunks = {}, waiting = {}, inflating = {}, matched = [], page = 0, size = 50, generation = 0;
  var filt = { verdict: -1, attribute: -1, pair: -1, group: -1, failed: false, q: "" };
  var WINDOW = 140, BR = /<\s*br\s*\/?\s*>|<\s*\/?\s*p\s*>/i, FMT = /<\s*\/?\s*(?:i|b|em|strong|u|span|div)\s*>/gi;

  FP.index = function (d) { idx = d; };
  FP.chunk = function (d) { chunks[d[0]] = d[1]; };
  FP.chunkz = function (k, b64) {
    inflating[k] = inflate(b64).then(
      function (d) { chunks[k] = d; delete inflating[k]; return true; },
      function () { delete inflating[k]; return false; });
  };
  function inflate(b64) {
    if (typeof DecompressionStream === "undefined") return Promise.reject(new Error("no DecompressionStream"));
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) appendText(e, String(text));
    return e;
  }
  function appendText(e, text, compact) {
    var parts = text.replace(FMT, "").split(BR), lastBr = false;
    for (var i = 0; i < parts.length; i++) {
      if (i && !(compact && lastBr)) { e.appendChild(document.createElement("br")); lastBr = true; }
      if (parts[i].trim()) lastBr = false;
      if (parts[i]) e.appendChild(document.createTextNode(parts[i]));
    }
  }
  function fmt(n) { return n.toLocaleString("en-US"); }

  function has(v, code) { return Array.isArray(v) ? v.indexOf(code) >= 0 : v === code; }

  function load(k, cb) {
    if (chunks[k]) return cb(true);
    if (inflating[k]) return inflating[k].then(cb);
    if (waiting[k]) return waiting[k].push(cb);
    waiting[k] = [cb];
    var s = document.createElement("script");
    s.src = idx.base + "chunk-" + ("00000" + k).slice(-6) + ".js";
    function done(ok) { var w = waiting[k]; delete waiting[k]; w.forEach(function (f) { f(ok); }); }
    s.onload = function () { if (inflating[k]) inflating[k].then(done); else done(!!chunks[k]); };
    s.onerror = function () { done(false); };
    document.body.appendChild(s);
  }
  function loadAll(list, cb) {
    var left = list.length, ok = true;
    if (!left) return cb(true);
    list.forEach(function (k) { load(k, function (good) { ok = ok && good; if (--left === 0) cb(ok); }); });
  }
  function missing() {
    $("fv-status").textContent = "";
    $("fv-status").appendChild(el("span", "fv-missing", typeof DecompressionStream === "undefined"
      ? "This browser cannot read the findings pages (they are compressed): open report.html in Chrome 80, Firefox 113, Safari 16.4 or later, or run `fairprobe export`."
      : "The findings pages were not found: keep the " + idx.base + " folder next to report.html."));
  }

  function row(i) {
    var c = chunks[(i / idx.chunk) | 0], r = c.rows[i % idx.chunk];
    var s = c.strings;  /* short strings are stored once per chunk, rows hold their indices */
    function str(k) { return s[k]; }
    return {
      id: r[0], left: c.texts[r[1]], ll: s[r[3]], rl: s[r[4]], la: s[r[5]], ra: s[r[6]], notes: r[8],
      edits: r[2].map(function (e) { return [e[0], e[1], s[e[2]]]; }), changes: r[7].map(str)
    };
  }

  /* Both sides as aligned segments: the unchanged runs are the same on both sides, so eliding them
     the same way keeps the two windows on the same change. */
  function segments(f) {
    var L = [], R = [], cur = 0;
    f.edits.slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (e) {
      L.push({ t: f.left.slice(cur, e[0]) }); R.push({ t: f.left.slice(cur, e[0]) });
      L.push({ t: f.left.slice(e[0], e[1]), m: true }); R.push({ t: e[2], m: true });
      cur = e[1];
    });
    L.push({ t: f.left.slice(cur) }); R.push({ t: f.left.slice(cur) });
    return [L, R];
  }
  /* Cut at a word boundary, and never inside a tag such as "<br />". */
  function clip(t, head) {
    if (head) return t.replace(/<[^>]{0,8}$/, "").replace(/\s+\S{0,20}$/, "");
    return t.replace(/^[^<]{0,8}>/, "").replace(/^\S{0,20}\s+/, "");
  }
  function windowed(segs) {
    var n = segs.length, out = [];
    if (n === 1) {
      var t = segs[0].t;
      return [{ t: t.length > 3 * WINDOW ? clip(t.slice(0, 3 * WINDOW), true) + " …" : t }];
    }
    segs.forEach(function (s, i) {
      var t = s.t;
      if (!s.m && i === 0 && t.length > WINDOW) t = "… " + clip(t.slice(-WINDOW), false);
      else if (!s.m && i === n - 1 && t.length > WINDOW) t = clip(t.slice(0, WINDOW), true) + " …";
      else if (!s.m && t.length > 2 * WINDOW) t = clip(t.slice(0, WINDOW), true) + " … " + clip(t.slice(-WINDOW), false);
      out.push({ t: t, m: s.m });
    });
    return out;
  }
  function textEl(segs, side, full) {
    var d = el("div", "fv-text");
    segs.forEach(function (s) {
      if (!s.m) return appendText(d, s.t, !full);
      if (!s.t) return;
      var m = el("mark", side === "L" ? "del" : "", s.t);
      d.appendChild(m);
    });
    return d;
  }
  function cell(label, segs, side, answer, full) {
    var td = el("td");
    td.appendChild(el("span", "fv-lbl", label));
    td.appendChild(textEl(segs, side, full));
    if (answer) {
      var a = el("div", "fv-ans");
      a.appendChild(el("span", "fv-lbl", "answer"));
      appendText(a, full || answer.length <= 300 ? answer : answer.slice(0, 300) + " …");
      td.appendChild(a);
    }
    return td;
  }

  function render() {
    var tbody = $("fv-body"), from = page * size, to = Math.min(matched.length, from + size), gen = ++generation;
    var need = {};
    for (var i = from; i < to; i++) need[(matched[i] / idx.chunk) | 0] = 1;
    $("fv-status").textContent = "loading…";
    loadAll(Object.keys(need).map(Number), function (ok) {
      if (gen !== generation) return;
      if (!ok) return missing();
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      for (var i = from; i < to; i++) tbody.appendChild(rowEls(matched[i]));
      if (!FP.shown && window.performance && performance.mark) { FP.shown = true; performance.mark("fairprobe-findings"); }
      var pages = Math.max(1, Math.ceil(matched.length / size));
      $("fv-page").value = page + 1; $("fv-pages").textContent = fmt(pages);
      $("fv-status").textContent = matched.length
        ? "findings " + fmt(from + 1) + "–" + fmt(to) + " of " + fmt(matched.length) + (matched.length < idx.total ? " matching (" + fmt(idx.total) + " in all)" : "")
        : "no finding matches";
    });
  }

  function rowEls(i) {
    var f = row(i), failed = idx.failed[i] === 1, sides = segments(f), frag = document.createDocumentFragment();
    var tr = el("tr", "fv-row" + (failed ? " failed" : ""));
    tr.setAttribute("data-finding", f.id);
    var v = el("td");
    v.appendChild(el("div", "fv-verdict", idx.facets.verdict[idx.keys.verdict[i]]));
    v.appendChild(el("div", "fv-id", f.id));
    tr.appendChild(v);
    var ch = el("td");
    f.changes.forEach(function (c) { ch.appendChild(el("span", "fv-change", c)).title = c; });
    tr.appendChild(ch);
    var lw = windowed(sides[0]), rw = windowed(sides[1]);
    var left = cell(f.ll, lw, "L", f.la);
    if (!f.rl) { left.colSpan = 2; tr.appendChild(left); }
    else { tr.appendChild(left); tr.appendChild(cell(f.rl, rw, "R", f.ra)); }
    var more = el("button", "fv-more", "full text ▾");
    more.type = "button";
    v.appendChild(more);
    frag.appendChild(tr);
    var open = null;
    more.addEventListener("click", function () {
      if (open) { open.parentNode.removeChild(open); open = null; more.textContent = "full text ▾"; return; }
      open = el("tr", "fv-full");
      var notes = el("td");
      notes.colSpan = 2;
      f.notes.forEach(function (n) { var p = el("div", "fv-notes"); p.appendChild(el("b", "", n[0] + ": ")); appendText(p, n[1]); notes.appendChild(p); });
      open.appendChild(notes);
      var lc = cell(f.ll, sides[0], "L", f.la, true);
      if (!f.rl) { lc.colSpan = 2; open.appendChild(lc); }
      else { open.appendChild(lc); open.appendChild(cell(f.rl, sides[1], "R", f.ra, true)); }
      tr.parentNode.insertBefore(open, tr.nextSibling);
      more.textContent = "full text ▴";
    });
    return frag;
  }

  function haystack(i) {
    var f = row(i);
    return [f.id, f.left, f.la, f.ra, f.changes.join(" ")].concat(f.edits.map(function (e) { return e[2]; })).join("\n").toLowerCase();
  }

  function apply() {
    var gen = ++generation, k = idx.keys, out = [];
    for (var i = 0; i < idx.total; i++) {
      if (filt.failed && idx.failed[i] !== 1) continue;
      if (filt.verdict >= 0 && k.verdict[i] !== filt.verdict) continue;
      if (filt.attribute >= 0 && k.attribute[i] !== filt.attribute) continue;
      if (filt.group >= 0 && k.group[i] !== filt.group) continue;
      if (filt.pair >= 0 && !has(k.pair[i], filt.pair)) continue;
      out.push(i);
    }
    page = 0;
    if (!filt.q) { matched = out; return render(); }
    var all = [];
    for (var c = 0; c < idx.chunks; c++) all.push(c);
    $("fv-status").textContent = "searching the texts…";
    loadAll(all, function (ok) {
      if (gen !== generation) return;
      if (!ok) return missing();
      var q = filt.q.toLowerCase();
      matched = out.filter(function (i) { return haystack(i).indexOf(q) >= 0; });
      render();
    });
  }

  function select(name, label) {
    var values = idx.facets[name], keys = idx.keys[name], counts = values.map(function () { return 0; });
    keys.forEach(function (v) { (Array.isArray(v) ? v : [v]).forEach(function (c) { counts[c]++; }); });
    var s = el("select");
    s.setAttribute("aria-label", label);
    s.appendChild(el("option", "", "all " + label)).value = "-1";
    values.map(function (v, c) { return [v, c]; })
      .filter(function (p) { return p[0] !== ""; })
      .sort(function (a, b) { return counts[b[1]] - counts[a[1]] || (a[0] < b[0] ? -1 : 1); })
      .forEach(function (p) { s.appendChild(el("option", "", p[0] + " (" + fmt(counts[p[1]]) + ")")).value = String(p[1]); });
    s.id = "fv-f-" + name;
    s.addEventListener("change", function () { filt[name] = Number(s.value); apply(); });
    if (s.options.length <= 2) s.style.display = "none";
    return s;
  }

  FP.start = function () {
    if (!idx) return;
    var box = $("fv-controls");
    [["verdict", "verdicts"], ["attribute", "attributes"], ["pair", "word pairs"], ["group", "groups"]].forEach(function (p) {
      box.appendChild(select(p[0], p[1]));
    });
    var only = el("label"), cb = el("input");
    cb.type = "checkbox"; cb.id = "fv-failed";
    only.appendChild(cb); only.appendChild(document.createTextNode(" failures only"));
    cb.addEventListener("change", function () { filt.failed = cb.checked; apply(); });
    box.appendChild(only);
    var q = el("input");
    q.type = "search"; q.id = "fv-q"; q.placeholder = "search texts and answers (Enter)…";
    q.setAttribute("aria-label", "search findings");
    q.addEventListener("change", function () { filt.q = q.value.trim(); apply(); });
    box.appendChild(q);
    function go(p) {
      var pages = Math.max(1, Math.ceil(matched.length / size));
      page = Math.max(0, Math.min(pages - 1, p));
      render();
    }
    $("fv-first").addEventListener("click", function () { go(0); });
    $("fv-prev").addEventListener("click", function () { go(page - 1); });
    $("fv-next").addEventListener("click", function () { go(page + 1); });
    $("fv-last").addEventListener("click", function () { go(Infinity); });
    $("fv-page").addEventListener("change", function () { go(Number($("fv-page").value) - 1); });
    apply();
  };
})();
