"""Two reports compared: what changed per step, per category, per op and in the deeper views, and
whether it is real.

diff/ owns the comparison and its JSON (`tb-advisor/diff/1`, docs/ARCHITECTURE.md §2): the step-time
tests (stats.py, tdist.py), matching ops and kernels across the runs, the uniform "the machine changed"
check, what became of each recommendation of the baseline (outcomes.py) and the sentence that explains
the change (explain.py). Both reports are read through report/document.py, never as dicts; the diff's
own JSON is read as the dict it is. It does not own which signal tells a fix was acted on or which
category its gain shows in: each rule's record says that (advice/rule.py `Outcome`), and diff/ only
reads each kind of signal off the two reports. It does not build or cache reports (report/), decide
rules (advice/), or show the diff (views/export/).
"""
