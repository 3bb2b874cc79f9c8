"""Readers turn one on-disk profile format into the framework-neutral Profile (model.py).

Owns: one package per format that has a reader (xplane/, kineto/), each decoding its files into the
same Profile and setting Profile.format; the formats themselves as records (formats/: names,
captures, reader, content check, doctor checks and span coordinates of each), which every stage
above asks instead of naming a format; the one guarded I/O layer every file is read through
(guarded_io.py, one size cap); the check a file passes before it is served (profile_check.py); and
the devices a profile's planes describe (devices.py). Does not own: where files are in a logdir and
which make a run (sources/), what the events mean (analysis/), or anything about reports.
"""
