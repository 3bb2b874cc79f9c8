"""Two report JSONs compared: what changed per step, per category and per op, and whether it is real.

It owns the comparison: matching names across runs, the changes and whether they exceed the noise,
and the closed loop (outcomes.py) that judges, per baseline recommendation, whether the candidate
acted on it and whether the time it bought falls inside the predicted interval. It does not own
which signal tells a fix was acted on or which category its gain shows in: each rule's record says
that (advice/rule.py `Outcome`), and diff/ only reads each kind of signal off the two reports. Nor
does it compute anything from a profile: it reads finished reports.
"""
