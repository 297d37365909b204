"""Design: per-view occlusion reports (occlusion.py) and the view designer (designer.py) that chooses K
directions maximising the worst-case δ* of a set of structures (δ* itself: ``viewcert.oracle.margin``)."""
