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
    var state = {filter: "all", col: "index", dir: 1, page: 0};
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
    function selected() {
      var out = rows.filter(function (r) { return state.filter === "all" || r[2].indexOf(state.filter) >= 0; });
      return out.sort(cmp);
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
      shown.textContent = sel.length + " items" + (state.filter === "all" ? "" : " (" + titles[state.filter] + ")")
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
    });
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
    // a filter named in the address (index.html#filter=NAME: the ladder report's links) is applied on load
    var asked = /^#filter=([a-z0-9_]+)$/.exec(window.location.hash);
    var button = asked && document.querySelector('#filters button[data-filter="' + asked[1] + '"]');
    if (button) button.click();
    else render();
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
    viewer.zoomTo();
    viewer.render();
    div.dataset.phantoms = data.phantoms.length;
    div.dataset.ready = "yes";
  }
  function start() {
    var block = document.getElementById("index-data");
    if (block) indexPage(block);
    itemPage();
    pane3d();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
