"""Learned readers: trained baselines that sit beside the ladder's rungs as empirical readings, never as
certificates.

- ``data``      the training and evaluation items of an input (study layout: train = every structure of
                ``structures.json`` not in ``eval.jsonl``; or a second input given as the training set)
- ``draw``      ``--train pyxtal:N[:SEED]``: training crystals from pyxtal (seeded, stratified by crystal system,
                disjoint from the eval items by reduced formula and id)
- ``features``  the study's 19 cell metrics of the INPUT cell (not conventionalised)
- ``forest``    ``cell-forest``: scikit-learn random forest on those metrics (500 trees, seed 23)
- ``cnn``       ``pixel-cnn``'s network and recipe: a PyTorch CNN that sees only viewcert's renders of every view
- ``pixel``     ``pixel-cnn``'s run: renders, the validation split, training, the card (CPU, threads, val figure)
- ``card``      the model card (JSON), the predictions in the native results format, the reader's
                report page (learning curve, confusion matrix), a ladder manifest

scikit-learn and torch are the optional ``learn`` extra (both also in ``test``); everything else in viewcert
runs without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.learn.data import LearnData, Split, load_learn_data
    from viewcert.learn.run import run_learn

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "LearnData": "data", "Split": "data", "load_learn_data": "data", "run_learn": "run",
}
lazy_face(__name__, _FACE)

__all__ = ["LearnData", "Split", "load_learn_data", "run_learn"]
