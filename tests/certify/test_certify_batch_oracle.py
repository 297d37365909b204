"""The batch path (``certify.evaluate.certify_items``) reconstructs its items in one oracle call, and item by
item when that call raises: the records are the per-item path's either way."""

from __future__ import annotations

import importlib

import pytest

from viewcert.certify import CertifyConfig
from viewcert.certify.evaluate import certify_item, certify_items
from viewcert.certify.inputs import load_input

evaluate = importlib.import_module("viewcert.certify.evaluate")  # the module (the package exports a function)


@pytest.mark.parametrize("cfg", [CertifyConfig(), CertifyConfig(delta=0.15, pairs="first", merge="greedy",
                                                                  periodic_merge=False)])
def test_one_oracle_call_per_batch(monkeypatch, cfg):
    items = list(load_input("builtin:prototypes").items)[:5]
    per_item = [certify_item(it, cfg).to_dict() for it in items]
    calls = []
    real = evaluate.reconstruct_batch
    monkeypatch.setattr(evaluate, "reconstruct_batch", lambda obs, **kw: calls.append(len(obs)) or real(obs, **kw))
    assert [o.to_dict() for o in certify_items(items, cfg)] == per_item
    assert calls == [len(items)]


def test_item_by_item_when_the_batch_call_raises(monkeypatch):
    items = list(load_input("builtin:prototypes").items)[:5]
    cfg = CertifyConfig()
    doomed = certify_item(items[2], cfg).to_dict()["formula"]
    real = evaluate._reconstruct

    def _reconstruct(obs, cell, cfg):
        if cell.formula == doomed:
            raise ValueError("oracle failure")
        return real(obs, cell, cfg)

    def reconstruct_batch(obs, **kw):
        raise ValueError("oracle failure")

    monkeypatch.setattr(evaluate, "_reconstruct", _reconstruct)
    monkeypatch.setattr(evaluate, "reconstruct_batch", reconstruct_batch)
    per_item = [certify_item(it, cfg).to_dict() for it in items]
    assert [o.to_dict() for o in certify_items(items, cfg)] == per_item
    assert "pipeline (_reconstruct): ValueError: oracle failure" in per_item[2]["error"]
    assert [r["outcome"] == "error" for r in per_item] == [False, False, True, False, False]
