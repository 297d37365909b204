"""Design: per-view occlusion reports (occlusion.py) and the view designer (designer.py) that chooses K
directions maximising the worst-case δ* of a set of structures (δ* itself: ``viewcert.oracle.margin``), and
legibility.py, which chooses K directions in which the labels of a complex's hydrogen-bond entries are legible
(greedy label coverage, ``design --objective legibility``)."""
