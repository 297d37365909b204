"""Attribution: split a model's error into perception and reasoning against the certified ceiling, and
audit the atoms a model claims to see. Reads result files and certificates; never imports ``render`` or
``oracle``.

- ``table``       the canonical long table (run, model, rung, item_id, sample_k, raw_output, parsed_answer,
                  target, score, parse_status, category, source_file, harness), TOML manifests, the study
                  folder's manifest, cross-arm checks (targets, coverage)
- ``parsing``     answer parsers that say why an answer is missing; majority vote with stated tie rules
- ``readers/``    one module per source: the study's JSON, native CSV/JSONL, VLMEvalKit, lmms-eval,
                  Inspect AI
- ``ladder``      rungs (chance, no-image, R4, R3, R2, vision-only, R1), unscored arms, exact shares,
                  ceilings from numbers or certificates
- ``extraction``  the fabrication audit (one-to-one periodic matching, species-aware/blind, null)
- ``items``       one status per item (not determined, label disagrees, answerable without the image, hard,
                  clean) and the accuracy on the clean items
- ``samples``     repeated samples: expected and majority accuracy, pass@k, pass^k, consistency, one interval
                  each (Clopper–Pearson for counts, item bootstrap for means)
- ``ties``        the majority vote under every tie rule, and what the rule does to the ranking
- ``posterior``   Beta-Binomial posteriors of an arm's per-sample accuracy (Laplace)
- ``failure_types`` every item a model misses at R4 typed from the rungs it passes and fails
- ``pairs``       model pairs: exact McNemar per rung and on the perception term, Benjamini–Hochberg, Connor's n
- ``quality``     item difficulty and discrimination (2PL fit), a subset keeping the models' ranking
- ``irt``         the 2PL with one respondent per model, rung effects and Laplace standard errors
- ``subset_check`` a subset checked leaving each model out, beside random subsets of the same size
- ``compare_page`` the two-model page (compare.html) beside the report
- ``evidence``    the item-level values above as one value for the report
- ``settings``    what the ladder, the diagnostics and the evidence were computed with, as typed values
- ``plots``       PNG figures (the only matplotlib user here); ``report`` HTML/Markdown/CSV/provenance,
                  ``report_items`` its item-level sections
- ``pipeline``    end-to-end entry points used by ``viewcert ladder`` / ``viewcert audit-extraction``
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.attribution.extraction import ExtractionAudit, audit_extraction
    from viewcert.attribution.ladder import (
        Ceiling,
        Ladder,
        build_ladder,
        ceiling_from_certificate,
        ceiling_from_number,
    )
    from viewcert.attribution.parsing import ParsedAnswer, get_parser, majority_vote
    from viewcert.attribution.pipeline import run_extraction, run_ladder, study_report
    from viewcert.attribution.report import Report, write_report
    from viewcert.attribution.table import Manifest, ResultTable, load_manifest

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``) so that importing one
#: submodule (the explorer reads ``parsing`` and ``table``) does not import the pipeline, scipy.stats, pandas
#: and matplotlib: 4-6 s of the warm main job (issue 37).
_FACE = {
    "ExtractionAudit": "extraction", "audit_extraction": "extraction",
    "Ceiling": "ladder", "Ladder": "ladder", "build_ladder": "ladder", "ceiling_from_certificate": "ladder",
    "ceiling_from_number": "ladder",
    "ParsedAnswer": "parsing", "get_parser": "parsing", "majority_vote": "parsing",
    "run_extraction": "pipeline", "run_ladder": "pipeline", "study_report": "pipeline",
    "Report": "report", "write_report": "report",
    "Manifest": "table", "ResultTable": "table", "load_manifest": "table",
}
lazy_face(__name__, _FACE)

__all__ = ["Ceiling", "ExtractionAudit", "Ladder", "Manifest", "ParsedAnswer", "Report", "ResultTable",
           "audit_extraction", "build_ladder", "ceiling_from_certificate", "ceiling_from_number", "get_parser",
           "load_manifest", "majority_vote", "run_extraction", "run_ladder", "study_report", "write_report"]
