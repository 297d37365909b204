"""Design: uniqueness margins δ* (margin.py), per-view occlusion reports (occlusion.py) and the view
designer (designer.py) that chooses K directions maximising the worst-case δ* of a set of structures."""
