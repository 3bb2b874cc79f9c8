"""How results leave the package: the HTTP routes of the tab (server/), the tb-advisor command (cli/),
and text, Markdown and HTML renderings (export/).

Views own presentation, transport and their errors (one-line messages, JSON error answers); they get
reports through report/door.py and read them through report/document.py. They decide nothing a
report, diff or trend does not already say.
"""
