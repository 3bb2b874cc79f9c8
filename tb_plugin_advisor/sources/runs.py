"""A discovered run → RunProfiles: the one place where the CLI and the tab open a run's files.

Runs are always looked up by name among the sessions discovery found, so no path a user or a request
supplies is ever opened directly.
"""

from __future__ import annotations

from typing import Iterable, Optional

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane import read_xplane
from tb_plugin_advisor.sources.discovery import Scan, Session

_SHOWN = 30


def known_runs(names: Iterable[str]) -> str:
    """`known runs: 'a', 'b' …` for error messages, bounded for huge logdirs."""
    names = list(names)
    if not names:
        return "no profile runs were found there (is it the right logdir? try `tb-advisor doctor LOGDIR`)"
    shown = ", ".join(f"'{n}'" for n in names[:_SHOWN])
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"known runs: {shown}{more}"


def find_run(scan: Scan, run: str, role: str = "") -> Session:
    """The session named `run` that holds XSpace profiles; AdvisorError saying what exists otherwise."""
    label = f"{role} run" if role else "run"
    session = scan.run(run)
    if session is None:
        known = known_runs(s.run for s in scan.sessions)
        raise AdvisorError(f"unknown {label} '{run}' in {scan.logdir}; {known}")
    if session.format != "xplane":
        raise AdvisorError(
            f"{label} '{run}' holds no .xplane.pb profile (found: {', '.join(session.files) or 'nothing'}); "
            "the Advisor reads XSpace profiles written by TensorFlow >= 2.2 or JAX"
        )
    return session


def load_run(session: Session, host: Optional[str] = None, role: str = "") -> RunProfiles:
    """Read every host of the session, or only `host`; ProfileReadError for unreadable files."""
    files = list(session.hosts)
    if host is not None:
        chosen = session.host(host)
        if chosen is None:
            label = f"{role} host" if role else "host"
            raise AdvisorError(
                f"unknown {label} '{host}' in run '{session.run}'; its hosts: {', '.join(session.host_names)}"
            )
        files = [chosen]
    return RunProfiles(run=session.run, profiles=[read_xplane(f.path, host=f.host) for f in files])
