"""One run's report, its contract end to end (docs/ARCHITECTURE.md §1, §2).

report/ owns what a report is and how it is made, pooled, stored and read back: sections.py is the
table of the report's keys (which analysis fills each, how hosts pool it, how it is written, what the
advice engine reads of it); analyze.py runs one host's analyses and advice; combine.py holds every
named way the hosts of a run are pooled, typed results in and out (nothing is rounded before the
report is written); run.py writes the JSON with one loop over the table;
schema.py describes its shape to check cached reports; document.py is the one reader of report JSON
(old, partial and hostile reports are read defensively there only); door.py is the one way to get a
report, from disk_cache.py or built on hostpool.py. It does not own the measurements (analysis/), the
rules and their words (advice/), what a profile format is (sources/, readers/), comparing or trending
reports (diff/, trend/), or showing them (views/).
"""
