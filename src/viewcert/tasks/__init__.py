"""Transformation tasks (MiSI-style): ChimeraX screen-axis commands, task items, and the identifiability
oracle that says which answers the after view determines."""
