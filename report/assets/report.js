// acpscope report: the message table, the timeline and the message
// details, built from the JSON document in the page. It fetches nothing.
// Lists draw only the rows in view, so a large capture opens at once.
"use strict";
(function () {
  var doc = JSON.parse(document.getElementById("acpscope-data").textContent);
  var rows = doc.rows;
  var bySeq = new Map();
  rows.forEach(function (r, i) { bySeq.set(r.s, i); });
  var findingsOf = new Map();
  doc.findings.forEach(function (f) {
    f.seqs.forEach(function (s) {
      if (!findingsOf.has(s)) findingsOf.set(s, []);
      findingsOf.get(s).push(f);
    });
  });
  var ROW = 22;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // VList shows count rows of height ROW in the scroll box box, drawing
  // only those in view; draw(i) makes row i's element.
  function VList(box, draw) {
    this.box = box;
    this.draw = draw;
    this.count = 0;
    this.pad = el("div", "pad");
    box.appendChild(this.pad);
    this.shown = new Map();
    var self = this;
    var queued = false;
    box.addEventListener("scroll", function () {
      if (queued) return;
      queued = true;
      requestAnimationFrame(function () { queued = false; self.render(); });
    });
  }
  VList.prototype.reset = function (count) {
    this.count = count;
    this.pad.style.height = count * ROW + "px";
    this.shown.forEach(function (e) { e.remove(); });
    this.shown.clear();
    this.render();
  };
  VList.prototype.render = function () {
    var h = this.box.clientHeight || 460;
    var first = Math.max(0, Math.floor(this.box.scrollTop / ROW) - 10);
    var last = Math.min(this.count, Math.ceil((this.box.scrollTop + h) / ROW) + 10);
    var self = this;
    this.shown.forEach(function (e, i) {
      if (i < first || i >= last) { e.remove(); self.shown.delete(i); }
    });
    for (var i = first; i < last; i++) {
      if (this.shown.has(i)) continue;
      var e = this.draw(i);
      e.classList.add("r");
      e.style.top = i * ROW + "px";
      this.box.appendChild(e);
      this.shown.set(i, e);
    }
  };
  VList.prototype.show = function (i) {
    var top = i * ROW, h = this.box.clientHeight || 460;
    if (top < this.box.scrollTop || top + ROW > this.box.scrollTop + h) this.box.scrollTop = Math.max(0, top - h / 3);
    this.render();
  };
  VList.prototype.redraw = function () { this.reset(this.count); };

  // ---- the message table ----
  var view = rows.map(function (_, i) { return i; });
  var selected = -1;
  var table = new VList(document.getElementById("table"), drawRow);

  function fmtTime(ms) { return (ms / 1000).toFixed(3) + "s"; }
  function fmtSize(n) {
    if (n < 1024) return n + " B";
    if (n < 1048576) return (n / 1024).toFixed(1) + " KiB";
    return (n / 1048576).toFixed(1) + " MiB";
  }
  function fmtMs(ms) { return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : ms.toFixed(1) + " ms"; }
  function problem(r) {
    return r.k === "error" || r.k === "invalid-json" || r.k === "invalid-utf8" || findingsOf.has(r.s) || !!r.ft;
  }

  function drawRow(i) {
    var r = rows[view[i]];
    var e = el("div", "row k-" + r.k + (view[i] === selected ? " sel" : ""));
    e.dataset.seq = r.s;
    e.append(
      el("span", "num", r.s), el("span", "num", fmtTime(r.t)),
      el("span", "dir-" + r.d, r.d === "c" ? "→" : "←"), el("span", "kind", r.k),
      el("span", "", r.m || (r.h && r.h.stream === "http" ? r.h.method + " " + r.h.status : "")),
      el("span", "", r.i || ""), el("span", "", r.ss || ""),
      el("span", "num", fmtSize(r.z)), el("span", "num", r.l ? fmtMs(r.l) : ""),
      el("span", "mark", (findingsOf.has(r.s) ? "!" : "") + (r.ft ? "⚑" : "")));
    e.title = "#" + r.s + " " + (r.m || r.k);
    return e;
  }

  document.getElementById("table").addEventListener("click", function (ev) {
    var e = ev.target.closest(".r");
    if (e) select(Number(e.dataset.seq), false);
  });

  var kinds = Array.from(new Set(rows.map(function (r) { return r.k; }))).sort();
  var kindSel = document.getElementById("filter-kind");
  kinds.forEach(function (k) { var o = el("option", "", k); o.value = k; kindSel.appendChild(o); });

  var haystacks = null;
  function haystack(i) {
    if (!haystacks) haystacks = new Array(rows.length);
    if (haystacks[i] === undefined) {
      var r = rows[i];
      haystacks[i] = ["#" + r.s, r.k, r.m, r.i, r.ss, r.f, r.ft, r.d === "c" ? "client" : "agent", r.e === "base64" ? "" : r.b]
        .join("\n").toLowerCase();
    }
    return haystacks[i];
  }

  function applyFilter() {
    var words = document.getElementById("filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    var dir = document.getElementById("filter-dir").value;
    var kind = kindSel.value;
    var problems = document.getElementById("filter-problems").checked;
    view = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (dir && r.d !== dir) continue;
      if (kind && r.k !== kind) continue;
      if (problems && !problem(r)) continue;
      if (words.length) {
        var h = haystack(i), ok = true;
        for (var w = 0; w < words.length && ok; w++) ok = h.indexOf(words[w]) >= 0;
        if (!ok) continue;
      }
      view.push(i);
    }
    document.getElementById("count").textContent = view.length + " of " + rows.length + " messages";
    table.box.scrollTop = 0;
    table.reset(view.length);
  }
  var filterTimer = 0;
  document.getElementById("filter").addEventListener("input", function () {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(applyFilter, 120);
  });
  ["filter-dir", "filter-kind", "filter-problems"].forEach(function (id) {
    document.getElementById(id).addEventListener("change", applyFilter);
  });

  function clearFilter() {
    document.getElementById("filter").value = "";
    document.getElementById("filter-dir").value = "";
    kindSel.value = "";
    document.getElementById("filter-problems").checked = false;
    applyFilter();
  }

  // select shows message seq: its row in the table and its details.
  function select(seq, scroll) {
    var i = bySeq.get(seq);
    if (i === undefined) return;
    selected = i;
    var at = view.indexOf(i);
    if (at < 0) { clearFilter(); at = view.indexOf(i); }
    table.redraw();
    table.show(at);
    showDetail(rows[i]);
    if (scroll) document.getElementById("messages").scrollIntoView();
  }

  // ---- the details of one message ----
  function pretty(text) {
    var out = [], depth = 0, inStr = false, esc = false;
    var pad = function () { return "\n" + "  ".repeat(depth); };
    for (var i = 0; i < text.length; i++) {
      var c = text[i];
      if (inStr) {
        out.push(c);
        if (esc) esc = false; else if (c === "\\") esc = true; else if (c === "\"") inStr = false;
        continue;
      }
      if (c === " " || c === "\t" || c === "\n" || c === "\r") continue;
      if (c === "\"") { inStr = true; out.push(c); continue; }
      if (c === "{" || c === "[") {
        var j = i + 1;
        while (j < text.length && /\s/.test(text[j])) j++;
        if (text[j] === (c === "{" ? "}" : "]")) { out.push(c, text[j]); i = j; continue; }
        depth++; out.push(c, pad()); continue;
      }
      if (c === "}" || c === "]") { depth = Math.max(0, depth - 1); out.push(pad(), c); continue; }
      if (c === ",") { out.push(c, pad()); continue; }
      if (c === ":") { out.push(": "); continue; }
      out.push(c);
    }
    return out.join("");
  }

  function showDetail(r) {
    var d = document.getElementById("detail");
    d.textContent = "";
    d.append(el("h3", "", "#" + r.s + " " + (r.d === "c" ? "client → agent" : "agent → client") + " · " + r.k + (r.m ? " · " + r.m : "")));
    var facts = el("dl", "facts");
    var fact = function (k, v) { if (v !== undefined && v !== null && v !== "") facts.append(el("dt", "", k), el("dd", "", v)); };
    fact("time", new Date(doc.start + r.t).toISOString() + " (+" + fmtTime(r.t) + ")");
    fact("id", r.i);
    fact("session", r.ss);
    fact("size", fmtSize(r.z) + (r.z >= 1024 ? " (" + r.z + " bytes)" : ""));
    fact("flags", r.f);
    fact("connection", r.c);
    fact("error code", r.ec);
    fact("batch", r.pa ? "#" + r.pa : "");
    d.append(facts);
    if (r.p) {
      var peer = el("p");
      var a = el("a", "seq", "#" + r.p);
      a.href = "#m" + r.p;
      peer.append(document.createTextNode(r.l ? "answers " : "answered by "), a);
      if (r.l) peer.append(document.createTextNode(" after " + fmtMs(r.l)));
      else { var ans = rows[bySeq.get(r.p)]; if (ans && ans.l) peer.append(document.createTextNode(" after " + fmtMs(ans.l))); }
      d.append(peer);
    }
    if (r.ft) d.append(el("p", "fault", "⚑ altered by acpscope: " + r.ft));
    (findingsOf.get(r.s) || []).forEach(function (f) {
      d.append(el("p", "finding", f.sev + " " + f.rule + ": " + f.msg));
    });
    if (r.h) {
      var h = el("details");
      h.append(el("summary", "", "HTTP " + (r.h.method || "") + " " + (r.h.path || "") + (r.h.status ? " " + r.h.status : "") + " (" + r.h.stream + ")"));
      h.append(el("pre", "", JSON.stringify(r.h, null, 2)));
      d.append(h);
    }
    if (r.fo) d.append(el("p", "muted", "Folded: the message is " + fmtSize(r.z) + "; the report holds its first " + fmtSize(r.b.length) + "."));
    var body;
    if (r.e === "base64") body = "(not UTF-8; base64)\n" + r.b;
    else if (/^\s*[\[{]/.test(r.b)) body = pretty(r.b);
    else body = r.b;
    d.append(el("pre", "json", body));
  }

  // ---- the timeline ----
  var end = rows.length ? rows[rows.length - 1].t : 0;
  var requests = [];
  rows.forEach(function (r) {
    if (r.k !== "request") return;
    var ans = r.p ? rows[bySeq.get(r.p)] : null;
    requests.push({ r: r, end: ans ? ans.t : end, open: !ans, failed: ans && ans.k === "error" });
  });
  end = Math.max(end, 1);
  var timeline = new VList(document.getElementById("timeline-list"), function (i) {
    var q = requests[i];
    var e = el("div", "tl");
    e.dataset.seq = q.r.s;
    var track = el("span", "track");
    var bar = el("span", "bar" + (q.r.d === "a" ? " agent" : "") + (q.open ? " open" : "") + (q.failed ? " failed" : ""));
    bar.style.left = (q.r.t / end * 100) + "%";
    bar.style.width = ((q.end - q.r.t) / end * 100) + "%";
    track.append(bar);
    e.append(el("span", "", fmtTime(q.r.t)), el("span", "", q.r.m + " [" + q.r.i + "]"), track,
      el("span", "", q.open ? "no answer" : fmtMs(q.end - q.r.t)));
    e.title = "#" + q.r.s + " " + q.r.m;
    return e;
  });
  document.getElementById("timeline-list").addEventListener("click", function (ev) {
    var e = ev.target.closest(".r");
    if (e) select(Number(e.dataset.seq), true);
  });

  // Links to messages (#m123) anywhere in the page open them.
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest("a");
    if (!a) return;
    var m = /^#m(\d+)$/.exec(a.getAttribute("href") || "");
    if (!m) return;
    ev.preventDefault();
    select(Number(m[1]), true);
  });

  applyFilter();
  timeline.reset(requests.length);
  var hash = /^#m(\d+)$/.exec(location.hash);
  if (hash) select(Number(hash[1]), true);
  window.acpscopeReadyAt = performance.now();
  document.documentElement.dataset.ready = "1";
})();
