"""Analyses: pure functions of a Profile (tb_plugin_advisor.model) that never touch files or HTTP.

steps → breakdown → verdict / inputs / ops, plus precision and Tensor Cores; report.py runs them all
and recommend.py turns their results into advice. Names, patterns and thresholds live in data tables
(event_names.py, thresholds.py, patterns.py) so that each rule is one reviewed, tested entry.
"""
