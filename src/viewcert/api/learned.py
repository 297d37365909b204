"""Train a learned reader (``viewcert learn``): cell-forest or pixel-cnn, its eval predictions written as a rung
the ladder reads. An empirical reading of the images or the cell, never a certificate (docs/learned-readers.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from viewcert.api.arguments import LIMITS, OPTIONAL_CALLABLE, validated
from viewcert.api.report import Line, Report, check_out
from viewcert.io.outputs import claimed
from viewcert.limits import Limits, using_limits


@validated("learn", inputs=("source",), limits=LIMITS, progress_factory=OPTIONAL_CALLABLE)
def learn(source: str, reader: str, out: str | Path = "out/learn", *, train: str | None = None,
          seed: int | None = None, force: bool = False, limits: Limits | None = None, progress_factory: Any = None,
          **cnn_options: Any) -> Report:
    """Train ``reader`` (cell-forest | pixel-cnn) on ``source``'s training split (or ``train``), predict the eval
    items into ``out/READER`` and say how to put them on the ladder; ``cnn_options``: protocol, image_size (px),
    epochs; ``progress_factory(what, total)`` returns a bar's ``advance(n)``. The report's value: the outcome.

    Parameters
    ----------
    source : str
        INPUT with eval items (the study layout: train = every structure not in ``eval.jsonl``).
    reader : str
        ``"cell-forest"`` or ``"pixel-cnn"``.
    out : str or Path
        Output folder; the reader's files go to ``out/READER``.
    train : str, optional
        A second INPUT as the training set, or ``pyxtal:N[:SEED]`` (drawn crystals).
    seed : int, optional
        Training seed (default: the reader's own).
    force : bool
        Replace the output of another learn run in ``out``; without it, refused.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).
    progress_factory : callable, optional
        ``progress_factory(what, total)`` returns a bar's ``advance(n)``.
    **cnn_options
        pixel-cnn only: protocol, image_size (px), epochs.

    Returns
    -------
    Report
        Accuracy lines and how to put the reader on the ladder; ``value``: the learn outcome.
    """
    with using_limits(limits):  # in force for the call and below
        from viewcert.learn.run import run_learn  # lazy: loaded when the job runs

        identity = {"source": str(source), "train": train}  # one benchmark: its readers' folders side by side
        with claimed(check_out(out), "learn", identity=identity, force=force) as claim:
            out = claim.shown
            res = run_learn(source, reader, out, train=train, seed=seed, progress_factory=progress_factory,
                            **cnn_options)
        lines = [f"{res.reader}: {res.correct}/{res.n} eval items correct; card {res.folder / 'card.json'}"]
        curve = res.card.get("training_curve")
        if curve:
            lines.append("training curve: " + ", ".join(f"{r['n_train']}: {r['correct']}/{r['n']}" for r in curve))
        lines.append(f"ladder: viewcert ladder --manifest {Path(out) / 'ladder.toml'} --r1 VALUE")
        return Report(tuple(Line(t) for t in lines), value=res)
