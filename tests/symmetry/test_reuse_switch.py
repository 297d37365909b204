"""The spglib-reuse switch (``CertifyConfig.label_shortcuts``, ``viewcert.symmetry.reuse.label_cell``): off,
spglib is called on every cell certification labels; on, labels are reused where the guards allow. Both ways
must write the same certificate records, byte for byte (the canonical JSON the digest hashes), on one
structure of each of the 230 space groups (pyxtal, the recipes of tests/support/pyxtal_recipes.py) and on the e3 set
(one structure per space group e3 holds in the suite; all 1,820 under `make bench`, marker ``bench``; skipped,
with the reason, when the study's data is absent). A switch that did nothing would pass that comparison, so
the spglib calls are counted too: three per crystal with the switch off (the cell as read, the rendered cell,
the reconstruction), fewer with it on.
"""

from __future__ import annotations

import pytest

from tests.support.pyxtal_recipes import RECIPES
from tests.support.shortcut_checks import _full_and_short
from viewcert.certify import CertifyConfig
from viewcert.certify.certificate import certificate_of
from viewcert.certify.evaluate import certify_items
from viewcert.certify.inputs import Dataset, Item, load_input
from viewcert.formats.records import canonical_bytes
from viewcert.symmetry import labels

#: the study's settings at δ = τ = 0.01 Å (all pairs) and its released oracle at δ = 0.15 Å (first pair, no
#: periodic merge)
KWS = [{"delta": 0.01, "tau": 0.01}, {"delta": 0.15, "tau": 0.01, "pairs": "first", "periodic_merge": False}]


def _records(ds: Dataset, kw: dict, reuse: bool) -> tuple[list[bytes], bytes]:
    """Every item record of the certificate of ``ds`` under ``kw`` with the switch ``reuse``, as the bytes the
    digest hashes, and the summary's."""
    cfg = CertifyConfig(**kw, label_shortcuts=reuse)
    cert = certificate_of(ds, cfg, certify_items(ds.items, cfg)).to_dict()
    return [canonical_bytes(it) for it in cert["items"]], canonical_bytes(cert["summary"])


def _differences(ds: Dataset, kw: dict) -> list[str]:
    """Ids of the items whose records differ between the switch on and off (and "summary")."""
    (on, s_on), (off, s_off) = _records(ds, kw, True), _records(ds, kw, False)
    assert len(on) == len(off) == len(ds.items)
    return [it.id for it, a, b in zip(ds.items, on, off, strict=True) if a != b] + (["summary"] if s_on != s_off else [])


@pytest.fixture(scope="module")
def space_groups(pyxtal_space_groups) -> Dataset:
    """One generated structure per space group 1-230."""
    items = tuple(Item(f"sg{g:03d}", "structure", s, f"pyxtal:{g}:{RECIPES[g][1]}")
                  for g, s in pyxtal_space_groups.items())
    return Dataset("pyxtal:230", "generated", items, {})


def test_shortcut_1_equals_fresh_spglib_on_all_230_space_groups(space_groups):
    """Shortcut 1 alone (the rendered cell's spglib label from the standardisation's dataset) against a fresh
    ``analyse_cell`` on the conventional cell, every field of spglib's and moyopy's labels."""
    bad = []
    for it in space_groups.items:
        _, _, full, short = _full_and_short(it.read())
        if full.spglib != short.spglib or full.moyo != short.moyo:
            bad.append((it.id, full.spglib, short.spglib))
    assert not bad, bad[:5]


def test_reuse_switch_writes_identical_records_on_all_230_space_groups(space_groups):
    assert len(space_groups.items) == 230
    differ = _differences(space_groups, KWS[0])
    assert not differ, differ[:10]


def test_reuse_switch_off_calls_spglib_on_every_cell_and_on_fewer(space_groups, monkeypatch):
    """Off: the cell as read, the rendered cell and the reconstruction of each crystal each get a spglib call
    (3 per item); on: the standardisation's dataset and the rendered cell's label stand in where the guards
    hold, so spglib runs on far fewer cells."""
    calls = []
    fresh = labels._spglib_label
    monkeypatch.setattr(labels, "_spglib_label", lambda *a: calls.append(1) or fresh(*a))
    ds = Dataset("pyxtal:12", "generated", space_groups.items[::20], {})  # 12 groups, triclinic to cubic
    for reuse in (False, True):
        calls.clear()
        outcomes = certify_items(ds.items, CertifyConfig(**KWS[0], label_shortcuts=reuse))
        assert all(o.to_dict()["outcome"] == "correct" for o in outcomes)
        n = len(calls)
        if not reuse:
            assert n == 3 * len(ds.items)
    assert n < len(ds.items)  # on: a fresh call only where a doubt signal fires


@pytest.fixture(scope="module")
def e3_per_space_group(shared_data, e3_one_per_space_group) -> Dataset:
    ds = load_input(shared_data / "data" / "e3", subset="all")
    items = tuple(it for it in ds.items if it.id in e3_one_per_space_group)
    assert len(items) == len(e3_one_per_space_group) > 100  # e3 spans well over a hundred groups
    return Dataset(ds.spec, ds.kind, items, ds.files, ds.subset)


@pytest.mark.shared_data
@pytest.mark.parametrize("kw", KWS)
def test_reuse_switch_writes_identical_records_on_one_e3_per_space_group(e3_per_space_group, kw):
    """The in-suite cover of the whole-set check below: every space group e3 holds, once."""
    differ = _differences(e3_per_space_group, kw)
    assert not differ, differ[:10]


@pytest.mark.shared_data
@pytest.mark.bench
@pytest.mark.parametrize("kw", KWS)
def test_reuse_switch_writes_identical_records_on_all_1820_e3(shared_data, kw):
    ds = load_input(shared_data / "data" / "e3", subset="all")
    differ = _differences(ds, kw)
    assert len(ds.items) == 1820 and not differ, differ[:10]
