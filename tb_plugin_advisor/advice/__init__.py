"""Advice: rules as data over the analyses' results, turned into recommendations and findings."""
