"""Reports, diffs and trends as text, Markdown and HTML: what the CLI prints and the exports save.

views/export/ owns how each output reads: the report's lines and tables, its HTML page, the
`--section` answers, the diff's and the trend's renderings. A report is read through
report/document.py (typed views, defaults for old reports); the diff's and the trend's JSON are read
as the dicts they are. Every number goes through formatting.py and every profile string through
markup.py's escaper. It does not compute, pool or judge anything: the figures and the verdicts come
from report/, diff/ and trend/.
"""
