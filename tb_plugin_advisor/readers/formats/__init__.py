"""The on-disk profile formats, one record each: what a format's files are called and how they make
captures, which reader turns one into a Profile, what a real file of it starts with, which of
doctor's checks apply to it, and how an evidence span addresses its events.

Owns: the ProfileFormat type (descriptor.py), one descriptor per format (xspace.py, kineto.py,
legacy.py) and the one list of them (registry.py), which every stage above asks instead of comparing
format names. Does not own: the decoding itself (readers/xplane/, readers/kineto/), walking a logdir
(sources/discovery.py), doctor's findings and their words (sources/doctor/), or what a framework
means to an analysis (Profile.framework).
"""
