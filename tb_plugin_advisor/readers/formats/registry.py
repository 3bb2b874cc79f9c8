"""The formats the Advisor knows, in one list, and the questions every stage asks of them.

A file name belongs to the first format in FORMATS that claims it (a PyTorch `.pt.trace.json` ends
like an old TensorFlow `.trace.json`, so the Kineto format comes before the legacy tools). Adding a
format is one descriptor module beside this one, its reader package, and its line here.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from tb_plugin_advisor.readers.formats.descriptor import ProfileFormat, SpanCoordinates
from tb_plugin_advisor.readers.formats.kineto import KINETO
from tb_plugin_advisor.readers.formats.legacy import LEGACY_TOOLS
from tb_plugin_advisor.readers.formats.xspace import XSPACE

FORMATS: Tuple[ProfileFormat, ...] = (XSPACE, KINETO, LEGACY_TOOLS)

_BY_ID = {f.id: f for f in FORMATS}
_BY_SPAN_LABEL = {f.spans.label: f.spans for f in FORMATS if f.spans is not None}


def format_named(format_id: str) -> Optional[ProfileFormat]:
    """The format with this id (Session.format, Profile.format); None for any other value
    (discovery's "unknown", "" on a Profile built by hand)."""
    return _BY_ID.get(format_id)


def is_analysed(format_id: str) -> bool:
    """Whether the Advisor reads and analyses files of this format (it has a reader)."""
    found = _BY_ID.get(format_id)
    return found is not None and found.analysed


def claiming(name: str) -> Optional[ProfileFormat]:
    """The format whose writer names a file `name` (the first in FORMATS), or None."""
    for candidate in FORMATS:
        if candidate.names(name):
            return candidate
    return None


def spans_of(format_id: str) -> SpanCoordinates:
    """How the evidence spans of a profile read from this format address its events. A Profile no
    reader made (format "") has only its own plane and line ids on its own time base, which are
    XSpace's coordinates: the Profile mirrors an XSpace."""
    fmt = _BY_ID.get(format_id)
    return fmt.spans if fmt is not None and fmt.spans is not None else XSPACE.spans


def span_coordinates(label: str) -> Optional[SpanCoordinates]:
    """How the spans a report labels `label` (their `format`) address their events; None for a label
    no format writes (an older or foreign report)."""
    return _BY_SPAN_LABEL.get(label)


def file_format(name: str) -> Optional[Tuple[ProfileFormat, str]]:
    """(format, host) of one file named on the command line, where no layout says what it is: the
    first analysed format that names files so, else the first whose files may lie under any such
    name (a trace saved by `export_chrome_trace`); None when no analysed format takes it."""
    analysed = [f for f in FORMATS if f.analysed]
    for candidate in analysed:
        if candidate.names(name):
            if candidate.host_of is not None:
                return candidate, candidate.host_of(name)
            return candidate, _outside_host(candidate, name) or name
    for candidate in analysed:
        host = _outside_host(candidate, name)
        if host is not None:
            return candidate, host
    return None


def _outside_host(candidate: ProfileFormat, name: str) -> Optional[str]:
    outside = candidate.outside_layout
    return outside.host_of(name) if outside is not None and outside.host_of is not None else None


def what_the_advisor_reads() -> str:
    """"A, and B": every analysed format, as error messages name them."""
    return _listed([f.reads_what for f in FORMATS if f.analysed], ", and ")


def file_patterns() -> str:
    """"*.a, *.b": the names of the files the Advisor reads, for help texts and errors."""
    return ", ".join(f.file_pattern for f in FORMATS if f.analysed)


def where_profiles_live() -> str:
    """"A or B": where every analysed format's files lie."""
    return _listed([f.where_written for f in FORMATS if f.analysed], " or ")


def _listed(items: Sequence[str], last: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + last + items[-1]
