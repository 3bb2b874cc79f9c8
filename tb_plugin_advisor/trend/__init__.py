"""Many captures of one job in capture order: where the series shifted and why.

trend/ owns the trend and its JSON (`tb-advisor/trend/1`, docs/ARCHITECTURE.md §2): selecting the
captures of a series (run_glob.py, select.py), summarising each capture's report (series.py, reading
it through report/document.py), finding change points (changes.py, thresholds in rules.py), naming
their causes (cause.py) and the CI gate (build.py). It sits above diff/ and borrows its statistics.
It does not obtain reports (report/door.py hands them in) or show the trend (views/export/).
"""
