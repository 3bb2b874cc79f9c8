"""Advice: every rule of the Advisor as one record, and the one engine that runs them.

It owns each piece of advice whole: the `Rule` record (rule.py: id, the check, the words and the
snippets per framework, the expected-gain function, the evidence span kinds, the outcome signal a
later capture is judged by), the one registry of records (registry.py, gathering the families of
rules/), the engine that turns what fires into the one advice type (recommend.py for a host's
`Facts`, findings.py for the deeper views), the expected-gain estimates (gains.py) and which spans
show each piece of advice (evidence.py). A rule id is written once, in its record; everything else
that needs to know about a rule asks the registry. It does not own the numbers the rules read
(analysis/ computes them, report/ gathers them into `Facts`), the thresholds the checks compare them
with (analysis/thresholds.py), how a signal is read off two reports (diff/outcomes.py), or
how advice is written out (report/ and views/).
"""
