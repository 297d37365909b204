"""The two-model page of a ladder report (``compare.html`` and its script ``compare.js``, beside ``report.html``):
two models' answers on every item side by side at one rung, with the paired test and its counts at the top.

At the top, for the chosen models A and B and rung: items only A gets right, only B, both, neither (counted from
the items on the page), and the exact McNemar p and its Benjamini–Hochberg adjustment read from ``pairs.csv``'s
row of the pair (so the counts at the top equal that row's ``a_only`` and ``b_only``, A and B in the page's order).
Below, one row per item: its id, right answer, status (``item_status.csv``), each model's vote, whether it is right
and, for a miss at R4, its type (``failure_types.csv``). Filters: who is right (only A, only B, both wrong, both
right), status, type. The choice is kept in the address (``compare.html#a=MODEL&b=MODEL&rung=R4``), so the report
can link a pair.

Opens from ``file://``: no server, no network (Content-Security-Policy ``default-src 'none'``, the script from the
page's own folder). Every received text (model names, ids, answers) reaches the page as JSON in a
``<script type="application/json">`` block with ``& < >`` written as ``\\u0026 \\u003c \\u003e`` (no tag can close
it), and the script writes it with ``textContent`` only. The same evidence gives the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from viewcert.io.atomic import write_text_atomic
from viewcert.sanitize import json_text

if TYPE_CHECKING:
    from viewcert.attribution.evidence import ItemEvidence

__all__ = ["SCRIPT", "page_data", "write_compare_page"]


def _json_block(obj) -> str:
    text = json_text(json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def page_data(ev: ItemEvidence) -> dict:
    """The page's data: items (id, target, status), per rung the answers and verdicts of every model with pairs at
    that rung, the R4 failure types, and the pairs' tests (``pairs.csv``).

    Parameters
    ----------
    ev : ItemEvidence
        The item evidence (``outcomes``, ``status``, ``failures``, ``pairs``).

    Returns
    -------
    dict
        Plain JSON values only.
    """
    items = ev.status["item_id"].astype(str).tolist()
    pos = {iid: i for i, iid in enumerate(items)}
    rungs = [f for f in dict.fromkeys(ev.pairs["family"]) if f in set(ev.outcomes["rung"])]
    arms: dict[str, dict[str, dict]] = {}
    for (model, rung), g in ev.outcomes.groupby(["model", "rung"], sort=True):
        if rung not in rungs:
            continue
        ans = [None] * len(items)
        right = [0] * len(items)
        for iid, a, ok in zip(g["item_id"], g["answer"], g["right"], strict=True):
            ans[pos[iid]] = None if a is None or pd.isna(a) else str(a)
            right[pos[iid]] = int(ok)
        arms.setdefault(str(rung), {})[str(model)] = {"answers": ans, "right": right}
    types: dict[str, dict[str, str]] = {}
    if ev.failures is not None:
        for _, r in ev.failures.iterrows():
            types.setdefault(str(r["model"]), {})[str(r["item_id"])] = str(r["type"])
    tests = {}
    for _, r in ev.pairs[ev.pairs["family"].isin(rungs)].iterrows():
        tests.setdefault(str(r["family"]), {}).setdefault(str(r["model_a"]), {})[str(r["model_b"])] = {
            "a_only": int(r["a_only"]), "b_only": int(r["b_only"]), "p_value": float(r["p_value"]),
            "p_bh": float(r["p_bh"])}
    return {"items": [{"id": iid, "target": str(t), "status": str(s)}
                      for iid, t, s in zip(items, ev.status["target"], ev.status["status"], strict=True)],
            "rungs": rungs, "arms": arms, "types": types, "tests": tests}


_CSS = ("body{font-family:system-ui,sans-serif;max-width:1150px;margin:1.5em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;font-size:12px}td,th{border-bottom:1px solid #ddd;padding:3px 7px;"
        "text-align:left}.right{color:#17622a}.wrong{color:#9b1c1c}#test{font-size:15px;background:#f6f6f6;"
        "padding:0.6em}#test b{font-size:17px}label{margin-right:1em}")

_BODY = """<h1>Two models, item by item</h1>
<p><a href="report.html">back to the report</a></p>
<form id="choose">
<label>model A <select id="a"></select></label><label>model B <select id="b"></select></label>
<label>rung <select id="rung"></select></label><br>
<label>show <select id="who"><option value="all">every item</option><option value="a">only A right</option>
<option value="b">only B right</option><option value="neither">both wrong</option>
<option value="both">both right</option></select></label>
<label>status <select id="status"><option value="">any</option></select></label>
<label>type of a miss <select id="type"><option value="">any</option></select></label>
</form>
<p id="test">only A right: <b id="a-only"></b> · only B right: <b id="b-only"></b> · both right: <b id="both"></b> ·
both wrong: <b id="neither"></b> · exact McNemar p = <b id="p-value"></b> (Benjamini–Hochberg within the rung:
<b id="p-bh"></b>; pairs.csv)</p>
<p id="shown"></p>
<table><thead><tr><th>item</th><th>right answer</th><th>status</th><th>A's answer</th><th>A's miss</th>
<th>B's answer</th><th>B's miss</th></tr></thead><tbody id="rows"></tbody></table>"""

#: the page's script, written as ``compare.js`` beside it (textContent only: no received text is parsed as HTML)
SCRIPT = r"""'use strict';
(function () {
  const data = JSON.parse(document.getElementById('data').textContent);
  const $ = (id) => document.getElementById(id);
  const opt = (sel, value, text) => { const o = document.createElement('option'); o.value = value;
    o.textContent = text; sel.appendChild(o); };
  let state = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
  data.rungs.forEach((r) => opt($('rung'), r, r));
  if (state.rung && data.rungs.includes(state.rung)) $('rung').value = state.rung;
  [...new Set(data.items.map((i) => i.status))].sort().forEach((s) => opt($('status'), s, s));
  const types = new Set(); Object.values(data.types).forEach((t) => Object.values(t).forEach((v) => types.add(v)));
  [...types].sort().forEach((t) => opt($('type'), t, t));
  function models(fromHash) {
    const m = Object.keys(data.arms[$('rung').value] || {}).sort();
    for (const id of ['a', 'b']) {
      const keep = (fromHash ? state[id] : '') || $(id).value || state[id];
      $(id).textContent = '';
      m.forEach((x) => opt($(id), x, x));
      if (m.includes(keep)) $(id).value = keep;
    }
    if ($('a').value === $('b').value && m.length > 1) $('b').value = m.find((x) => x !== $('a').value);
  }
  function test(rung, a, b) {
    const t = data.tests[rung] || {};
    if (t[a] && t[a][b]) return t[a][b];
    if (t[b] && t[b][a]) { const r = t[b][a]; return {a_only: r.b_only, b_only: r.a_only, p_value: r.p_value,
      p_bh: r.p_bh}; }
    return null;
  }
  function cell(tr, text, cls) { const td = document.createElement('td'); td.textContent = text;
    if (cls) td.className = cls; tr.appendChild(td); }
  function draw() {
    const rung = $('rung').value, a = $('a').value, b = $('b').value;
    location.replace('#' + new URLSearchParams({a: a, b: b, rung: rung}).toString());
    const A = data.arms[rung][a], B = data.arms[rung][b];
    const ta = data.types[a] || {}, tb = data.types[b] || {};
    const n = {a: 0, b: 0, both: 0, neither: 0};
    const rows = $('rows'); rows.textContent = '';
    let shown = 0;
    data.items.forEach((it, i) => {
      const ra = A.right[i] === 1, rb = B.right[i] === 1;
      const who = ra && rb ? 'both' : ra ? 'a' : rb ? 'b' : 'neither';
      n[who] += 1;
      const ma = rung === 'R4' ? (ta[it.id] || '') : '', mb = rung === 'R4' ? (tb[it.id] || '') : '';
      if ($('who').value !== 'all' && $('who').value !== who) return;
      if ($('status').value && $('status').value !== it.status) return;
      if ($('type').value && $('type').value !== ma && $('type').value !== mb) return;
      shown += 1;
      const tr = document.createElement('tr');
      cell(tr, it.id); cell(tr, it.target); cell(tr, it.status);
      cell(tr, A.answers[i] === null ? '(no answer)' : A.answers[i], ra ? 'right' : 'wrong'); cell(tr, ma);
      cell(tr, B.answers[i] === null ? '(no answer)' : B.answers[i], rb ? 'right' : 'wrong'); cell(tr, mb);
      rows.appendChild(tr);
    });
    $('a-only').textContent = n.a; $('b-only').textContent = n.b;
    $('both').textContent = n.both; $('neither').textContent = n.neither;
    const t = test(rung, a, b);
    $('p-value').textContent = t ? t.p_value.toPrecision(4) : 'not tested';
    $('p-bh').textContent = t ? t.p_bh.toPrecision(4) : 'not tested';
    $('shown').textContent = shown + ' of ' + data.items.length + ' items shown';
  }
  $('rung').addEventListener('change', () => { models(); draw(); });
  ['a', 'b', 'who', 'status', 'type'].forEach((id) => $(id).addEventListener('change', draw));
  window.addEventListener('hashchange', () => {
    state = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
    if (state.a === $('a').value && state.b === $('b').value && state.rung === $('rung').value) return;
    if (state.rung && data.rungs.includes(state.rung)) $('rung').value = state.rung;
    models(true); draw();
  });
  models(true); draw();
}());
"""


def write_compare_page(path: str | Path, ev: ItemEvidence) -> Path:
    """Write ``compare.html`` (at ``path``) and ``compare.js`` beside it (module docstring).

    Parameters
    ----------
    path : str or Path
        The page's path, in the report's folder.
    ev : ItemEvidence
        The item evidence.

    Returns
    -------
    Path
        The page written.
    """
    path = Path(path)
    write_text_atomic(path.with_name("compare.js"), SCRIPT)
    html = ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'self'\"><title>Two models, item by item</title>"
            f"<style>{_CSS}</style><script src=\"compare.js\" defer></script></head>\n<body>\n{_BODY}\n"
            f"<script type=\"application/json\" id=\"data\">{_json_block(page_data(ev))}</script>\n</body></html>\n")
    return write_text_atomic(path, html)
