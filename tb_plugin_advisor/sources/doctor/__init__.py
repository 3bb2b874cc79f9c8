"""`tb-advisor doctor`: what TensorBoard will and won't show for a logdir, why, and the fix.

Owns: reading each session's host files for what doctor needs (checks.check_host), deciding which
findings apply (checks.py: the ones every session gets, and FORMAT_CHECKS, which a format's
descriptor picks from), their words and fixes (findings.py) and the doctor JSON (results.py). Does
not own: which checks a format gets (its descriptor in readers/formats/), how its files are read
(the format's reader), or writing anything (fix-logdir writes the markers, sources/markers.py).
"""
