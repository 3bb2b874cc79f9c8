"""Evidence spans: the few events of a profile that show a recommendation or finding, in the trace
file's own coordinates, so a person can open them in a timeline.

It owns finding those events (gather.py, by the span kinds a rule's record names) and writing their
coordinates as the file's format addresses them (span.py, asking readers/formats/). It does not decide
which rules fire (advice/) or how a span is shown (views/).
"""
