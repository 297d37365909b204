"""Certification: symmetry (spglib, cross-checked by moyopy), render ceilings and certificates.

Kept import-light: ``viewcert.standardize`` imports ``certify._spglib`` at the bottom of the stack."""
