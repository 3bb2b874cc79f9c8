"""Where runs come from: discovery of profile sessions, TensorBoard run markers, run lookup, doctor.

Owns: walking a logdir (walk.py: local, symlink trees, gs://, s3://, the walk budget), turning its
directories into sessions (discovery.py for `plugins/profile/<session>/` directories,
run_directories.py for formats whose files lie directly in a run directory), the session and scan
types (session.py), finding a run by name and opening its files with their format's reader
(runs.py), keeping the latest scan for the server (live.py), the `.profile-empty` markers
(markers.py) and doctor (doctor/). Does not own: what a format's files are called, how they group
into captures, how they are read or checked (readers/formats/ and the reader packages, asked through
the registry), or anything an analysis or a report computes.
"""
