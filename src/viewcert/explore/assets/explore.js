// viewcert explore: the index's filters, sorting and pages, and the item pages' layer toggles.
// No network, no dependencies; received text is only ever set through textContent.
"use strict";
(function () {
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function indexPage(block) {
    var data = JSON.parse(block.textContent);
    var rows = data.rows, size = data.page_size, titles = data.titles;
    var models = data.models || [], rungs = data.rungs || [];
    // model: null (every model) or a model's name; verdicts: {rung: "right" | "wrong"}
    var state = {filter: "all", col: "index", dir: 1, page: 0, model: null, verdicts: {}};
    var tbody = document.querySelector("#items tbody");
    var pager = document.getElementById("pager");
    var shown = document.getElementById("shown");
    function key(r, col) {
      if (col === "index") return r[0];
      if (col === "id") return r[1];
      return r[3][Number(col)];
    }
    function cmp(a, b) {
      var x = key(a, state.col), y = key(b, state.col);
      var nx = typeof x === "number", ny = typeof y === "number";
      if (nx && ny) return (x - y) * state.dir || a[0] - b[0];
      if (nx !== ny) return nx ? -1 : 1;  // numbers before text (blank cells last)
      return String(x).localeCompare(String(y)) * state.dir || a[0] - b[0];
    }
    function rawId(r) { return r[6] === null || r[6] === undefined ? r[1] : r[6]; }
    // an item passes the answer filters when, on every rung named, the model named (or, with none named, every
    // model with a verdict there, at least one) has that verdict (row[7]: per model one letter per rung r/w/-)
    function answered(r) {
      var named = Object.keys(state.verdicts);
      if (!named.length) return true;
      var m = state.model === null ? -1 : models.indexOf(state.model);
      if (state.model !== null && m < 0) return false;
      return named.every(function (rung) {
        var k = rungs.indexOf(rung), want = state.verdicts[rung] === "right" ? "r" : "w";
        if (k < 0 || !r[7]) return false;
        if (m >= 0) return r[7][m].charAt(k) === want;
        var got = r[7].map(function (codes) { return codes.charAt(k); }).filter(function (c) { return c !== "-"; });
        return got.length > 0 && got.every(function (c) { return c === want; });
      });
    }
    function selected() {
      var out = rows.filter(function (r) {
        return (state.filter === "all" || r[2].indexOf(state.filter) >= 0) && answered(r);
      });
      return out.sort(cmp);
    }
    function describe() {
      var parts = [];
      if (state.filter !== "all") parts.push(titles[state.filter]);
      var named = Object.keys(state.verdicts);
      if (named.length) {
        parts.push((state.model === null ? "every model" : state.model) + ": " + named.map(function (r) {
          return state.verdicts[r] + " on " + r; }).join(", "));
      }
      return parts.length ? " (" + parts.join("; ") + ")" : "";
    }
    // the filter in force as the address's fragment (the ladder report's links use the same form)
    function toHash() {
      var q = new URLSearchParams();
      if (state.filter !== "all") q.set("filter", state.filter);
      if (state.model !== null) q.set("model", state.model);
      Object.keys(state.verdicts).forEach(function (r) { q.set(r, state.verdicts[r]); });
      var text = q.toString();
      history.replaceState(null, "", text ? "#" + text : window.location.pathname + window.location.search);
    }
    function render() {
      var sel = selected();
      var pages = Math.max(1, Math.ceil(sel.length / size));
      if (state.page >= pages) state.page = pages - 1;
      var part = sel.slice(state.page * size, (state.page + 1) * size);
      var frag = document.createDocumentFragment();
      part.forEach(function (r) {
        var tr = el("tr");
        tr.dataset.index = r[0];
        tr.appendChild(el("td", r[0]));
        var td = el("td"), a = el("a", r[1]);
        a.href = r[4];
        a.className = "item-link";
        td.appendChild(a);
        tr.appendChild(td);
        var tt = el("td");
        if (r[5]) {
          var img = el("img");
          img.src = r[5];
          img.loading = "lazy";
          img.alt = "";
          img.className = "thumb";
          tt.appendChild(img);
        }
        tr.appendChild(tt);
        r[3].forEach(function (v) { tr.appendChild(el("td", v === "" ? "–" : v)); });
        tr.appendChild(el("td", r[2].map(function (t) { return titles[t]; }).join(", ")));
        frag.appendChild(tr);
      });
      tbody.replaceChildren(frag);
      shown.textContent = sel.length + " items" + describe()
        + (pages > 1 ? ", page " + (state.page + 1) + " of " + pages : "");
      shown.dataset.count = sel.length;
      pager.replaceChildren();
      for (var p = 0; p < pages && pages > 1; p++) {
        var b = el("button", p + 1, p === state.page ? "on" : "");
        b.type = "button";
        b.dataset.page = p;
        pager.appendChild(b);
      }
    }
    document.getElementById("filters").addEventListener("click", function (ev) {
      var b = ev.target.closest("button[data-filter]");
      if (!b) return;
      state.filter = b.dataset.filter;
      state.page = 0;
      document.querySelectorAll("#filters button").forEach(function (x) { x.classList.toggle("on", x === b); });
      render();
      toHash();
    });
    var modelBox = document.getElementById("f-model"), rungBox = document.getElementById("f-rungs");
    var rungSelects = {};
    if (modelBox) {
      modelBox.appendChild(el("option", "every model (that answered)")).value = "";
      models.forEach(function (m) { modelBox.appendChild(el("option", m)).value = m; });
      rungs.forEach(function (r) {
        var label = el("label", " " + r + " "), sel = el("select");
        ["any", "right", "wrong"].forEach(function (v) { sel.appendChild(el("option", v)).value = v; });
        sel.dataset.rung = r;
        label.appendChild(sel);
        rungBox.appendChild(label);
        rungSelects[r] = sel;
      });
      document.getElementById("answer-filters").addEventListener("change", function () {
        state.model = modelBox.value === "" ? null : modelBox.value;
        state.verdicts = {};
        rungs.forEach(function (r) { if (rungSelects[r].value !== "any") state.verdicts[r] = rungSelects[r].value; });
        state.page = 0;
        render();
        toHash();
      });
    }
    pager.addEventListener("click", function (ev) {
      var b = ev.target.closest("button[data-page]");
      if (!b) return;
      state.page = Number(b.dataset.page);
      render();
    });
    document.querySelector("#items thead").addEventListener("click", function (ev) {
      var th = ev.target.closest("th[data-col]");
      if (!th) return;
      var col = th.dataset.col;
      state.dir = state.col === col ? -state.dir : 1;
      state.col = col;
      render();
    });
    // the filter named in the address is applied on load and when the address changes: index.html#filter=NAME,
    // #model=M&R4=wrong&R3=right (the ladder report's links), #item=ID (that item's page)
    function fromHash() {
      var asked = new URLSearchParams(window.location.hash.replace(/^#/, ""));
      if (asked.has("item")) {
        var hit = rows.filter(function (r) { return rawId(r) === asked.get("item"); })[0];
        if (hit) { window.location.replace(hit[4]); return; }
      }
      var f = asked.get("filter");
      state.filter = f && Object.prototype.hasOwnProperty.call(titles, f)
        && document.querySelector('#filters button[data-filter="' + f + '"]') ? f : "all";
      document.querySelectorAll("#filters button").forEach(function (x) {
        x.classList.toggle("on", x.dataset.filter === state.filter); });
      state.model = asked.has("model") ? asked.get("model") : null;
      state.verdicts = {};
      rungs.forEach(function (r) {
        var v = asked.get(r);
        if (v === "right" || v === "wrong") state.verdicts[r] = v;
      });
      if (modelBox) {
        modelBox.value = state.model !== null && models.indexOf(state.model) >= 0 ? state.model : "";
        rungs.forEach(function (r) { rungSelects[r].value = state.verdicts[r] || "any"; });
      }
      state.page = 0;
      render();
    }
    // the filter in force saved as an ids file (viewcert.io.idlist: one id per line, "#" lines skipped), made in the
    // page as a Blob: every item it selects, on every page, in the order shown
    var save = document.getElementById("save-ids"), saveNote = document.getElementById("save-note");
    if (save) save.addEventListener("click", function () {
      var ids = selected().map(rawId);
      // what Python's splitlines() breaks at, and what str.strip() removes, cannot stand in a line of the file
      var bad = ids.filter(function (i) {
        return !i || /[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]/.test(i) || /^[\s\x1c-\x1f]|[\s\x1c-\x1f]$/.test(i)
          || i.charAt(0) === "#";
      });
      if (bad.length) {
        saveNote.textContent = bad.length + " of these ids cannot be written one per line (a line break, a leading #"
          + " or surrounding spaces): nothing saved";
        return;
      }
      var head = "# viewcert explore: " + ids.length + " items" + describe().replace(/[\r\n]/g, " ") + "\n";
      var url = URL.createObjectURL(new Blob([head + ids.map(function (i) { return i + "\n"; }).join("")],
                                             {type: "text/plain;charset=utf-8"}));
      var a = el("a");
      a.href = url;
      a.download = "ids.txt";
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 0);
      saveNote.textContent = ids.length + " ids saved";
    });
    window.addEventListener("hashchange", fromHash);
    fromHash();
  }
  function itemPage() {
    document.querySelectorAll(".legend input[data-layer]").forEach(function (box) {
      function apply() { document.body.classList.toggle("hide-" + box.dataset.layer, !box.checked); }
      box.addEventListener("change", apply);
      apply();
    });
    // a click on a view enlarges it to the window; a second click or Escape puts it back in the grid
    document.querySelectorAll("figure.fig .view").forEach(function (view) {
      view.addEventListener("click", function () {
        var fig = view.closest("figure.fig");
        var big = !fig.classList.contains("big");
        document.querySelectorAll("figure.fig.big").forEach(function (f) { f.classList.remove("big"); });
        fig.classList.toggle("big", big);
      });
    });
    document.addEventListener("keydown", function (ev) {
      if (ev.key !== "Escape") return;
      document.querySelectorAll("figure.fig.big").forEach(function (f) { f.classList.remove("big"); });
    });
  }
  // the 3D pane: the rendered cell drawn by the vendored 3Dmol.js from the page's own JSON (no network)
  function pane3d() {
    var block = document.getElementById("structure-3d"), div = document.getElementById("pane3d");
    if (!block || !div || !window.$3Dmol) return;
    var data = JSON.parse(block.textContent);
    var viewer = window.$3Dmol.createViewer(div, {backgroundColor: "white"});
    var model = viewer.addModel();
    model.addAtoms(data.atoms.map(function (a, k) { return {elem: a[0], x: a[1], y: a[2], z: a[3], serial: k}; }));
    viewer.setStyle({}, {sphere: {scale: 0.3, colorscheme: "Jmol"}});
    data.edges.forEach(function (e) {
      viewer.addLine({start: {x: e[0], y: e[1], z: e[2]}, end: {x: e[3], y: e[4], z: e[5]}, color: "black"});
    });
    // phantom k: one sphere, linked to its rings in the 2D views (data-group "phantom k"): hovering either
    // highlights both
    var rings = function (k) { return document.querySelectorAll('circle.mk.phantom[data-group="phantom ' + k + '"]'); };
    var spheres = [];
    function light(k, on) {
      rings(k).forEach(function (c) { c.classList.toggle("lit", on); });
      spheres[k - 1].updateStyle({color: on ? "#00c2ff" : "#ff1fd2"});
      div.dataset.highlight = on ? "phantom " + k : "";
      viewer.render();
    }
    data.phantoms.forEach(function (p, j) {
      spheres.push(viewer.addSphere({center: {x: p[0], y: p[1], z: p[2]}, radius: 0.5, color: "#ff1fd2",
        hoverable: true, hover_callback: function () { light(j + 1, true); },
        unhover_callback: function () { light(j + 1, false); }}));
      rings(j + 1).forEach(function (c) {
        c.addEventListener("mouseenter", function () { light(j + 1, true); });
        c.addEventListener("mouseleave", function () { light(j + 1, false); });
      });
    });
    data.near.forEach(function (p) {
      viewer.addSphere({center: {x: p[0], y: p[1], z: p[2]}, radius: 0.6, color: "#bf8700", wireframe: true});
    });
    // drawn atom j: its rings in the 2D views (data-group "drawn j", the same scene's order) and its sphere here;
    // hovering either lights both
    var atomStyle = {sphere: {scale: 0.3, colorscheme: "Jmol"}}, litAtom = null;
    function lightAtom(j, on) {
      if (on && litAtom !== null && litAtom !== j) lightAtom(litAtom, false);
      document.querySelectorAll('circle.mk[data-group="drawn ' + j + '"]').forEach(function (c) {
        c.classList.toggle("lit", on); });
      viewer.setStyle({serial: j}, on ? {sphere: {scale: 0.45, color: "#00c2ff"}} : atomStyle);
      litAtom = on ? j : null;
      if (on || div.dataset.highlight === "atom " + j) div.dataset.highlight = on ? "atom " + j : "";
      viewer.render();
    }
    viewer.setHoverable({}, true, function (atom) { if (atom && atom.serial !== undefined) lightAtom(atom.serial, true); },
      function (atom) { if (atom && atom.serial === litAtom) lightAtom(atom.serial, false); });
    document.querySelectorAll("svg.overlay").forEach(function (svg) {
      var w = Number(svg.getAttribute("width")), atoms = [];
      svg.querySelectorAll('circle.mk[data-group^="drawn "]').forEach(function (c) {
        atoms.push([Number(c.dataset.group.slice(6)), Number(c.dataset.u), Number(c.dataset.v)]); });
      if (!atoms.length) return;
      svg.addEventListener("mousemove", function (ev) {
        if (ev.target.closest && ev.target.closest("circle.mk.phantom")) {  // a phantom's ring: its own highlight
          if (litAtom !== null) lightAtom(litAtom, false);
          return;
        }
        var box = svg.getBoundingClientRect(), k = w / box.width;
        var u = (ev.clientX - box.left) * k, v = (ev.clientY - box.top) * k, best = null, bestD = 6 * Math.max(1, k);
        atoms.forEach(function (a) {
          var d = Math.hypot(a[1] - u, a[2] - v);
          if (d < bestD) { bestD = d; best = a[0]; }
        });
        if (best === null) { if (litAtom !== null) lightAtom(litAtom, false); }
        else if (best !== litAtom) lightAtom(best, true);
      });
      svg.addEventListener("mouseleave", function () { if (litAtom !== null) lightAtom(litAtom, false); });
    });
    div.viewcertViewer = viewer;  // for tests: the viewer's modelToScreen
    div.dataset.near = data.near.length;
    viewer.zoomTo();
    viewer.render();
    div.dataset.phantoms = data.phantoms.length;
    div.dataset.ready = "yes";
  }
  // the map (explore.chart): every item a point drawn on the canvas under the plot's SVG frame from the page's
  // data (rows [index, x, y, outcome class, phantoms 0/1, id]), at u = pad + x / x_top * (width - 2 pad),
  // v = height - pad - y / y_top * (height - 2 pad) in the plot's px; the nearest point within its radius + 2 px
  // of the pointer is ringed and named, a click opens its page
  function mapPage(block) {
    var data = JSON.parse(block.textContent), pts = data.points, r = data.radius;
    var plot = document.querySelector(".map-plot"), svg = document.getElementById("map");
    var canvas = document.getElementById("map-points");
    var w = data.width - 2 * data.pad, hgt = data.height - 2 * data.pad;
    var uv = pts.map(function (p) {
      return [data.pad + p[1] / data.x_top * w, data.height - data.pad - p[2] / data.y_top * hgt]; });
    var NS = "http://www.w3.org/2000/svg";
    function style(cls) {  // the style sheet's look of a point of that class (.pt.correct, .pt.ph, ...)
      var c = document.createElementNS(NS, "circle");
      c.setAttribute("class", "pt " + cls);
      svg.appendChild(c);
      var s = getComputedStyle(c);
      var out = {fill: s.fill, stroke: s.stroke, width: parseFloat(s.strokeWidth), alpha: parseFloat(s.fillOpacity)};
      c.remove();
      return out;
    }
    var styles = {};
    ["correct", "incorrect", "item_error", "none"].forEach(function (c) {
      styles[c + " 0"] = style(c);
      styles[c + " 1"] = style(c + " ph");
    });
    var ratio = window.devicePixelRatio || 1, ctx = canvas.getContext("2d");
    canvas.width = Math.round(data.width * ratio);
    canvas.height = Math.round(data.height * ratio);
    ctx.scale(canvas.width / data.width, canvas.height / data.height);
    pts.forEach(function (p, k) {  // in item order: a later item is drawn over an earlier one
      var st = styles[p[3] + " " + p[4]] || styles["none 0"];
      ctx.beginPath();
      ctx.arc(uv[k][0], uv[k][1], r, 0, 2 * Math.PI);
      ctx.globalAlpha = st.alpha;
      ctx.fillStyle = st.fill;
      ctx.fill();
      ctx.globalAlpha = 1;
      ctx.lineWidth = st.width;
      ctx.strokeStyle = st.stroke;
      ctx.stroke();
    });
    var lit = document.createElementNS(NS, "circle");
    lit.setAttribute("class", "pt-lit");
    lit.setAttribute("r", r + 1.5);
    svg.appendChild(lit);
    function nearest(ev) {  // the topmost point within r + 2 px of the pointer, or -1
      var box = canvas.getBoundingClientRect();
      var u = (ev.clientX - box.left) * data.width / box.width, v = (ev.clientY - box.top) * data.height / box.height;
      var best = -1, bestD = r + 2;
      for (var k = 0; k < uv.length; k++) {
        var d = Math.hypot(uv[k][0] - u, uv[k][1] - v);
        if (d <= bestD) { bestD = d; best = k; }
      }
      return best;
    }
    function href(k) { return "items/" + String(pts[k][0]).padStart(4, "0") + ".html"; }
    plot.addEventListener("mousemove", function (ev) {
      var k = nearest(ev);
      plot.classList.toggle("on-point", k >= 0);
      lit.classList.toggle("on", k >= 0);
      plot.title = k >= 0 ? pts[k][5] + ": " + data.x_label + " " + pts[k][1] + ", " + data.y_label + " "
        + Number(pts[k][2].toPrecision(4)) : "";
      plot.dataset.lit = k >= 0 ? pts[k][0] : "";
      if (k >= 0) { lit.setAttribute("cx", uv[k][0]); lit.setAttribute("cy", uv[k][1]); }
    });
    plot.addEventListener("click", function (ev) {
      var k = nearest(ev);
      if (k >= 0) window.location.href = href(k);
    });
    canvas.dataset.drawn = pts.length;
  }
  function start() {
    var block = document.getElementById("index-data");
    if (block) indexPage(block);
    var points = document.getElementById("map-data");
    if (points) mapPage(points);
    itemPage();
    pane3d();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
