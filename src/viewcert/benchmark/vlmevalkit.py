"""VLMEvalKit's multiple-choice TSV layout for a benchmark export: index, image (JSON list of base64 PNGs),
image_path, question, A…G, answer (letter), category, split, id, source_id."""

from __future__ import annotations

import json
from pathlib import Path

from viewcert.benchmark.prompts import LETTERS
from viewcert.io.images import png_base64


def mcq_tsv(records: list[dict], out: Path, question: str, choices: tuple[str, ...], task: str) -> str:
    """The TSV text for the exported records (images read from ``out``)."""
    import pandas as pd  # lazy: pandas is slow to import and only the TSV needs it

    rows = []
    for r in records:
        b64 = [png_base64((out / p).read_bytes()) for p in r["images"]]
        row = {"index": r["index"], "image": json.dumps(b64), "image_path": json.dumps([Path(p).name for p in
                                                                                        r["images"]]),
               "question": question}
        for letter, c in zip(LETTERS, choices, strict=False):
            row[letter] = c
        row.update({"answer": LETTERS[choices.index(r["answer"])], "category": task, "split": "test",
                    "id": f"q{r['index']:04d}", "source_id": r["id"]})
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.to_csv(sep="\t", index=False, lineterminator="\n")
