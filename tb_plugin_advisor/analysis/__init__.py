"""Analyses: pure functions of one Profile (tb_plugin_advisor.model) that never touch files, HTTP,
advice or JSON merging.

classify/ says what names and devices mean; step_time/, precision/ and deep/ measure; report/
runs them all and advice/ turns their results into recommendations and findings. Every threshold is
in thresholds.py, so that each rule is one reviewed, tested entry.
"""
