"""Training and evaluation items of a learned reader.

- a study layout (``structures.json`` + ``eval.jsonl`` + ``labels_sidecar.json``): the eval items are those
  of ``eval.jsonl`` (labels from it), the training items every other structure (labels from the sidecar);
- any input with ``--train INPUT2``: the eval items are INPUT's (its eval subset when it is a study layout),
  the training items all of INPUT2's; ids present in both are refused (a leak);
- any input with ``--train pyxtal:N[:SEED]``: N crystals drawn from pyxtal, seeded, stratified by crystal
  system, disjoint from the eval items by reduced formula and id (``learn.draw``).

Every item needs a crystal-system label (the dataset's own); one without is an error naming it. A training item
holding an eval structure under another id (the same species and the same cell: lattice lengths to 0.001 Å and
angles to 0.01°, each sorted, ``cell_key``) is refused (a leak), naming both ids.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from viewcert.certify.inputs import is_study_layout, load_input, load_study
from viewcert.errors import InputError
from viewcert.learn.draw import draw
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS


@dataclass(frozen=True)
class Split:
    """One side of the data: item ids, their labels, the dataset items (``certify.inputs.Item``)."""

    ids: tuple[str, ...]
    labels: tuple[str, ...]
    items: tuple

    def digest(self) -> str:
        """SHA-256 over (id, input digest, label) of every item, in order."""
        h = hashlib.sha256()
        for it, lab in zip(self.items, self.labels, strict=True):
            h.update(json.dumps([it.id, it.sha256, lab]).encode())
        return h.hexdigest()

    def structures(self) -> list:
        return [it.read() for it in self.items]


@dataclass(frozen=True)
class LearnData:
    train: Split
    eval: Split
    source: str
    train_source: str
    files: dict

    def to_dict(self) -> dict:
        return {"input": self.source, "train_input": self.train_source, "n_train": len(self.train.ids),
                "n_eval": len(self.eval.ids), "train_digest": self.train.digest(),
                "eval_digest": self.eval.digest(), "files": self.files}


def _split(items, what: str) -> Split:
    labels = []
    for it in items:
        cs = (it.label or {}).get("crystal_system")
        if cs not in CRYSTAL_SYSTEMS:
            raise InputError(f"{what} item {it.id!r} has no crystal-system label (got {cs!r})", field="label")
        labels.append(cs)
    return Split(tuple(it.id for it in items), tuple(labels), tuple(items))


def cell_key(structure) -> tuple:
    """What makes two structures the same for a leak check, whatever their ids: the sorted atomic numbers and
    the cell's sorted lattice lengths (Å, to 0.001) and angles (degrees, to 0.01); a molecule: the numbers only."""
    numbers = tuple(sorted(int(z) for z in np.asarray(structure.numbers)))
    if structure.lattice is None:
        return (numbers,)
    lat = np.asarray(structure.lattice, dtype=float)
    lengths = np.linalg.norm(lat, axis=1)
    angles = [np.degrees(np.arccos(np.clip(lat[i] @ lat[j] / (lengths[i] * lengths[j]), -1.0, 1.0)))
              for i, j in ((1, 2), (0, 2), (0, 1))]
    return (numbers, tuple(round(float(x), 3) for x in sorted(lengths)),
            tuple(round(float(x), 2) for x in sorted(angles)))


def refuse_shared_structures(train_items, eval_items, *, field: str) -> None:
    """InputError naming the first training item whose structure is an eval item's (``cell_key``), any ids.
    Items that cannot be read are left to the readers (they report them)."""
    def key(it):
        try:
            return cell_key(it.read())
        except Exception:  # noqa: BLE001 - an unreadable item is the reader's to report, not a leak
            return None

    evals: dict[tuple, str] = {}
    for it in eval_items:
        if (k := key(it)) is not None:
            evals.setdefault(k, it.id)
    for it in train_items:
        k = key(it)
        if k is not None and k in evals:
            raise InputError(f"training item {it.id!r} has the species and cell of eval item {evals[k]!r} (an eval "
                             "structure under another id: a leak); remove it from the training set", field=field)


def load_learn_data(source: str | Path, train: str | Path | None = None) -> LearnData:
    """The eval and training splits of ``source`` (and ``train``).

    Parameters
    ----------
    source : str or Path
        INPUT with the eval items (study layout: train = every structure not in ``eval.jsonl``).
    train : str or Path, optional
        A second INPUT as the training set, or ``pyxtal:N[:SEED]``. Items are checked against the limits in
        force when read.

    Returns
    -------
    LearnData
        The eval and training splits (structures and crystal-system labels).
    """
    p = Path(str(source)).expanduser()
    study = is_study_layout(p)
    ev = load_input(str(source), subset="eval")
    files = {f"input/{k}": v for k, v in ev.files.items()}
    if train is None:
        if not study:
            raise InputError("this input has no training split (only a study layout has one); pass --train INPUT2",
                             field="--train")
        everything = load_study(p, subset="all")
        eval_ids = {it.id for it in ev.items}
        tr_items = tuple(it for it in everything.items if it.id not in eval_ids)
        train_source = f"{source} (structures.json minus eval.jsonl)"
    else:
        if str(train).startswith("pyxtal:"):
            tr = draw(str(train), ev.items)
        else:
            tr = load_input(str(train), subset="all")
        files.update({f"train/{k}": v for k, v in tr.files.items()})
        both = sorted({it.id for it in tr.items} & {it.id for it in ev.items})
        if both:
            raise InputError(f"{len(both)} item id(s) are in both the training and the eval set: {both[:5]}",
                             field="--train")
        tr_items = tr.items
        train_source = str(train)
    if not tr_items:
        raise InputError("the training set is empty", field="--train")
    refuse_shared_structures(tr_items, ev.items, field="--train" if train is not None else "structures.json")
    return LearnData(_split(tr_items, "training"), _split(ev.items, "eval"), str(source), train_source, files)


VAL_PER_SYSTEM = 30  # the eval split's own size per system (210 = 7 x 30)
VAL_SEED = 44


def validation_split(labels, *, seed: int = VAL_SEED, per_system: int = VAL_PER_SYSTEM) -> np.ndarray:
    """Sorted indices of the validation items carved out of a training split: ``per_system`` items of each
    crystal system (fewer on a small set: at most a seventh of that system's items), drawn by numpy
    ``default_rng(seed)`` system by system in ``CRYSTAL_SYSTEMS`` order. The reader's choices are made on them;
    the eval items are never among them (they are not in the training split)."""
    lab = np.asarray(labels)
    rng = np.random.default_rng(seed)
    picked = []
    for cs in CRYSTAL_SYSTEMS:
        pool = np.flatnonzero(lab == cs)
        k = min(per_system, len(pool) // 7)
        if k:
            picked.extend(int(i) for i in rng.choice(pool, k, replace=False))
    return np.array(sorted(picked), dtype=np.int64)
