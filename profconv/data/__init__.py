"""Bundled synthetic data set and trained weights (see scripts/make_bundle.py)."""
