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
- ``stats``       Clopper–Pearson, paired item bootstrap with share suppression, exact McNemar, sign test,
                  Holm
- ``extraction``  the fabrication audit (one-to-one periodic matching, species-aware/blind, null)
- ``plots``       PNG figures (the only matplotlib user here); ``report`` HTML/Markdown/CSV/provenance
- ``pipeline``    end-to-end entry points used by ``viewcert ladder`` / ``viewcert audit-extraction``
"""
