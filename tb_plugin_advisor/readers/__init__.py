"""Readers turn one on-disk profile format into the framework-neutral Profile (model.py)."""
