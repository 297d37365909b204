"""Learned readers: trained baselines that sit beside the ladder's rungs as empirical readings, never as
certificates.

- ``data``      the training and evaluation items of an input (study layout: train = every structure of
                ``structures.json`` not in ``eval.jsonl``; or a second input given as the training set)
- ``features``  the study's 19 cell metrics of the INPUT cell (not conventionalised)
- ``forest``    ``cell-forest``: scikit-learn random forest on those metrics (500 trees, seed 23)
- ``cnn``       ``pixel-cnn``: a small PyTorch CNN that sees only viewcert's renders of every view
- ``card``      the model card (JSON), the predictions in the native results format, a ladder manifest

scikit-learn and torch are the optional ``learn`` extra; everything else in viewcert runs without them.
"""
