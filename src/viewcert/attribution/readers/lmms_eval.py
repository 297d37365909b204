"""lmms-eval ``--log_samples`` JSONL.

lmms-eval writes ``{output_path}/{model_name_sanitized}/{date_id}_samples_{task}.jsonl``, one JSON object
per document: ``doc_id`` (the document's index in the task split), ``target`` (stringified),
``filtered_resps`` (one entry per request: the response after the task's filters, a string, or a list of
strings when the task repeats generation), ``resps`` (the raw responses; dropped by the logger when equal
to ``filtered_resps``), ``doc_hash``, ``prompt_hash``, ``target_hash``, ``input`` (the prompt), and one
key per metric returned by the task's ``process_results`` (a number such as ``"exact_match": 1.0`` or a
dict such as ``{"question_id": ..., "score": 1}``).

The model name, when the manifest gives none, is ``model_name`` of the ``{date_id}_results.json`` lmms-eval
writes beside the samples (``"org/model"``; empty for the ``dummy`` model: then ``pretrained=`` of its
``config.model_args``, else ``config.model`` with its arguments), else the folder name (``org__model``, sanitised); an unusable
results file is a warning on the table, not an error.

Options:

- ``id_field``: take the item id from a key inside a metric dict or a top-level key (e.g.
  ``material_id``) instead of ``doc_id``;
- ``id_map``: a JSON file ``{doc_id: item_id}``;
- ``metric``: the metric key to use as the harness score (default: the first numeric or dict-with-score
  key after the standard ones). A document-level metric is used as the per-sample score only when the
  document has one sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from viewcert.attribution.parsing import AnswerParser, get_parser
from viewcert.attribution.readers._common import (
    as_score,
    canonical_target,
    finish,
    is_missing,
    item_context,
    log_text,
    row,
)
from viewcert.attribution.table import ResultTable, canonical_rung
from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines, loads_json_strict, read_received_text

HARNESS = "lmms_eval"
STANDARD_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash",
                 "target_hash", "input", "token_counts", "task", "split", "input_text", "image_paths"}


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def _metric_value(value: Any) -> Any:
    if isinstance(value, dict):
        for key in ("score", "acc", "accuracy", "exact_match", "correct", "hit"):
            if key in value:
                return value[key]
        return None
    return value


def _read_id_map(id_map: str | Path) -> dict[str, str]:
    """The {doc_id: item_id} JSON object of an id map file."""
    try:
        raw_map = loads_json_strict(read_received_text(id_map, what="id map"), source=str(id_map))
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"cannot read id_map: {exc}", source=str(id_map), field="id_map") from None
    if not isinstance(raw_map, dict):
        raise InputError("id_map must be a JSON object {doc_id: item_id}", source=str(id_map),
                         field="id_map")
    return {str(k): str(v) for k, v in raw_map.items()}


def _document(obj: Any, n: int, src: str) -> tuple[dict, list, list]:
    """Line ``n`` of the JSONL (parsed) checked (doc_id, target, responses): (object, outputs, raw outputs)."""
    where = f"line {n}"
    if not isinstance(obj, dict):
        raise InputError(f"{where}: not a JSON object", source=src)
    if "doc_id" not in obj:
        raise InputError(f"{where} lacks 'doc_id'", source=src, field="doc_id")
    doc_id = obj["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
        raise InputError(f"{where}: doc_id must be an integer or string, got {type(doc_id).__name__}",
                         source=src, field="doc_id")
    if "target" not in obj:
        raise InputError(f"{where} lacks 'target'", source=src, field="target")
    if "filtered_resps" in obj:
        outputs = _flatten(obj["filtered_resps"])
        raws = _flatten(obj["resps"]) if "resps" in obj else outputs
        if len(raws) != len(outputs):
            raws = outputs
    elif "resps" in obj:
        outputs = raws = _flatten(obj["resps"])
    else:
        raise InputError(f"{where} has neither 'filtered_resps' nor 'resps'", source=src,
                         field="filtered_resps")
    if not outputs:
        raise InputError(f"{where}: no responses", source=src, field="filtered_resps")
    return obj, outputs, raws


def _item_id(obj: dict, where: str, src: str, id_field: str | None, mapping: dict[str, str] | None) -> str:
    """The item id of a document: its id_field (top level or in a metric dict), else id_map[doc_id], else
    doc_id."""
    doc_id = obj["doc_id"]
    if id_field is not None:
        iid = obj.get(id_field)
        if iid is None:
            for v in obj.values():
                if isinstance(v, dict) and id_field in v:
                    iid = v[id_field]
                    break
        if iid is None:
            raise InputError(f"{where}: no {id_field!r} at top level or in a metric dict", source=src,
                             field=id_field)
    elif mapping is not None:
        if str(doc_id) not in mapping:
            raise InputError(f"{where}: doc_id {doc_id!r} is not in id_map", source=src, field="doc_id")
        iid = mapping[str(doc_id)]
    else:
        iid = doc_id
    return str(iid)


def _logged_id(obj: dict) -> str | None:
    """The item id the log itself records: ``id`` inside a metric dict, as the exported task's
    ``process_results`` writes it (``benchmark.harness_files``); None when there is none."""
    for k, v in obj.items():
        if k not in STANDARD_KEYS and isinstance(v, dict) and isinstance(v.get("id"), str):
            return v["id"]
    return None


def _doc_score(obj: dict, outputs: list, where: str, src: str, metric: str | None):
    """The harness's own score of a single-response document (the given metric, else the first
    non-standard numeric key), None otherwise."""
    metric_key = metric
    if metric_key is None:
        for k, v in obj.items():
            if k not in STANDARD_KEYS and _metric_value(v) is not None and not isinstance(
                _metric_value(v), (list, str)
            ):
                metric_key = k
                break
    elif metric_key not in obj:
        raise InputError(f"{where} lacks metric {metric_key!r}", source=src, field=metric_key)
    if metric_key is not None and len(outputs) == 1:
        return as_score(_metric_value(obj[metric_key]), source=src, where=where, field=metric_key)
    return None


def model_from_results(path: Path) -> tuple[str | None, str | None]:
    """(model name, warning) from the ``{date_id}_results.json`` lmms-eval writes beside the samples file:
    its ``model_name`` (e.g. ``"org/model"``, which the folder name sanitises to ``org__model``). (None, None)
    when there is no such file; (None, why) when it is over the size limit, not JSON or has no name."""
    stem = path.stem
    if "_samples_" not in stem:
        return None, None
    results = path.parent / f"{stem.split('_samples_')[0]}_results.json"
    if not results.is_file():
        return None, None
    try:
        data = loads_json_strict(read_received_text(results, what="results file"), source=str(results))
        name = data.get("model_name")
        if not isinstance(name, str) or not name.strip():  # the dummy model leaves it empty: its config names it
            name = _config_name(data.get("config"))
    except (InputError, ValueError, AttributeError) as exc:
        return None, f"{results.name}: not used for the model name ({' '.join(str(exc).split())[:120]})"
    if not isinstance(name, str) or not name.strip():
        return None, f"{results.name}: no model_name; the folder name is the model"
    return name.strip(), None


def _config_name(config) -> str | None:
    """``pretrained=`` of the run's ``model_args``, else ``config.model`` with its arguments (``dummy
    (response=A)``); None without a config."""
    if not isinstance(config, dict) or not isinstance(config.get("model"), str):
        return None
    args = config.get("model_args") if isinstance(config.get("model_args"), str) else ""
    pairs = dict(a.split("=", 1) for a in args.split(",") if "=" in a)
    if pairs.get("pretrained", "").strip():
        return pairs["pretrained"].strip()
    return f"{config['model']} ({args})" if args else config["model"]


def _category(obj: dict) -> str | None:
    """The first ``category`` text of the document's metric records (lmms-eval logs it per metric)."""
    for v in obj.values():
        if isinstance(v, dict) and isinstance(v.get("category"), str):
            return v["category"]
    return None


def _model_name(path: Path, warnings: list[str]) -> str:
    """lmms-eval's results file beside the samples, else its model_name_sanitized folder."""
    model, why = model_from_results(path)
    warnings += [why] if why else []
    model = model or path.parent.name
    if not model:
        raise InputError("no model name", source=str(path), field="model")
    return model


def read_lmms_eval(
    path: str | Path,
    *,
    model: str | None = None,
    rung: str | None = None,
    run: str | None = None,
    parser: AnswerParser | None = None,
    id_field: str | None = None,
    id_map: str | Path | None = None,
    metric: str | None = None,
    items=None,
) -> ResultTable:
    """The documents as canonical rows; ``items``: a shipped benchmark (``attribution.shipped``) mapping
    ``doc_id`` (the export's index) and letter targets to the item id and its shipped choice."""
    path = Path(path)
    src = str(path)
    parser = get_parser(parser)
    if not path.exists():  # anything else that is not a regular file: refused by the received reader
        raise InputError("file not found", source=src)
    warnings: list[str] = []
    if not model:
        model = _model_name(path, warnings)
    if not rung:
        raise InputError("the rung must come from the manifest", source=src, field="rung")
    rung = canonical_rung(rung, source=src)
    mapping = _read_id_map(id_map) if id_map is not None else None
    records = []
    seen: dict[str, int] = {}
    stem = path.stem
    run = run or (stem.split("_samples_")[0] if "_samples_" in stem else stem)
    disagree: list[str] = []
    for n, doc in iter_json_lines(log_text(path), source=src):
        where = f"line {n}"
        obj, outputs, raws = _document(doc, n, src)
        iid, dparser = item_context(items, parser, _item_id(obj, where, src, id_field, mapping))
        logged = _logged_id(obj)
        if items is not None and id_field is None and logged is not None and logged != iid:
            disagree.append(f"line {n}: doc_id {obj['doc_id']!r} maps to {iid!r} but the log records {logged!r}")
        if iid in seen:
            raise InputError(f"{where}: duplicate item id {iid!r} (first at line {seen[iid]})", source=src,
                             field="doc_id" if id_field is None else id_field)
        seen[iid] = n
        target = canonical_target(dparser, obj["target"], source=src, where=where, field="target")
        doc_score = _doc_score(obj, outputs, where, src, metric)
        category = _category(obj)
        for s, (out, raw) in enumerate(zip(outputs, raws, strict=True)):
            text = None if is_missing(out) else str(out)
            records.append(row(run=run, model=model, rung=rung, item_id=iid, sample_k=s,
                               raw_output=None if is_missing(raw) else str(raw), parsed=dparser.parse(text),
                               target=target, category=category, source_file=src, harness=HARNESS,
                               harness_score=doc_score))
    if disagree:
        raise InputError(f"{len(disagree)} document(s) whose logged id disagrees with ids.csv: "
                         + "; ".join(disagree[:5]) + ("; …" if len(disagree) > 5 else ""), source=src,
                         field="doc_id")
    if not records:
        raise InputError("no samples in the file", source=src)
    return finish(records, path=path, harness=HARNESS, warnings=warnings, model=model, rung=rung)
