"""A discovered run → RunProfiles: the one place where the CLI and the tab open a run's files.

Runs are always looked up by name among the sessions discovery found, so no path a user or a request
supplies is ever opened directly.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, List, Optional, Sequence

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.formats.descriptor import ProfileFormat
from tb_plugin_advisor.readers.formats.registry import file_format, format_named, what_the_advisor_reads
from tb_plugin_advisor.sources.session import HostFile, Scan, Session

_SHOWN = 30


def known_runs(names: Iterable[str]) -> str:
    """`known runs: 'a', 'b' …` for error messages, bounded for huge logdirs."""
    names = list(names)
    if not names:
        return "no profile runs were found there (is it the right logdir? try `tb-advisor doctor LOGDIR`)"
    shown = ", ".join(f"'{n}'" for n in names[:_SHOWN])
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"known runs: {shown}{more}"


def _components(name: str) -> List[str]:
    return [c for c in name.replace("\\", "/").split("/") if c]


def _holds_components(run: str, wanted: Sequence[str]) -> bool:
    """`wanted` appears in `run` as whole, consecutive path components (`b/c` in `a/b/c/d`)."""
    parts = _components(run)
    n = len(wanted)
    return n > 0 and any(parts[i : i + n] == list(wanted) for i in range(len(parts) - n + 1))


def match_runs(sessions: Sequence[Session], query: str) -> List[Session]:
    """The sessions a user means by `query`, by the first rule that matches any:

    1. the exact run name;
    2. whole path components: runs under the directory `query` names (`ctl` → `ctl/<session>`, and
       `run1_naive` → `exp/run1_naive/train/<session>`), or whose run directory is `query`;
    3. a raw prefix of the run name (`run1_n`), unless `query` ends with `/`, which marks the end
       of a component.

    People type the directory they created, or the start of a long timestamped name. A directory
    named exactly wins over longer names that merely start with it (`ctl` beside `ctl_slow`), since
    matching the raw string first made the name the user created "ambiguous".
    """
    raw = query.strip().replace("\\", "/")
    bounded = raw.endswith("/")
    query = raw.rstrip("/")
    if not query:
        return []
    exact = [s for s in sessions if s.run == query]
    if exact:
        return exact
    wanted = _components(query)
    by_component = [
        s for s in sessions if _holds_components(s.run, wanted) or s.run_dir_rel.rstrip("/") == query
    ]
    if by_component or bounded:
        return by_component
    return [s for s in sessions if s.run.startswith(query)]


def resolve_run(sessions: Sequence[Session], query: str, where: str, role: str = "") -> Session:
    """The one session `query` names (see match_runs); AdvisorError listing the candidates when it
    names several, or the known runs when it names none."""
    label = f"{role} run" if role else "run"
    matches = match_runs(sessions, query)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise AdvisorError(f"unknown {label} '{query}' in {where}; {known_runs(s.run for s in sessions)}")
    shown = ", ".join(f"'{s.run}'" for s in matches[:_SHOWN])
    more = f" and {len(matches) - _SHOWN} more" if len(matches) > _SHOWN else ""
    raise AdvisorError(
        f"{label} '{query}' is ambiguous in {where}: it matches {len(matches)} runs: {shown}{more}; "
        "give more of the name"
    )


def find_run(scan: Scan, run: str, role: str = "") -> Session:
    """The session `run` names (a full run name, a unique prefix, or its run directory's name) that
    holds profiles the Advisor reads (a format with a reader); AdvisorError saying what exists
    otherwise."""
    label = f"{role} run" if role else "run"
    session = resolve_run(scan.sessions, run, scan.logdir, role)
    fmt = format_named(session.format)
    if fmt is None or not fmt.analysed:
        raise AdvisorError(
            f"{label} '{session.run}' holds no profile the Advisor reads "
            f"(found: {', '.join(session.files) or 'nothing'}); "
            f"the Advisor reads {what_the_advisor_reads()}"
        )
    return session


def reader_of(session: Session) -> ProfileFormat:
    """The analysed format of the session's files; AdvisorError for a format the Advisor does not read
    (find_run and the routes turn those away first)."""
    fmt = format_named(session.format)
    if fmt is None or not fmt.analysed:
        raise AdvisorError(f"run '{session.run}' holds no profile the Advisor reads; "
                           f"the Advisor reads {what_the_advisor_reads()}")
    return fmt


# on_progress(done_bytes, total_bytes) over all of a run's files: what progress bars show.
RunProgress = Callable[[int, int], None]


def host_files(session: Session, host: Optional[str] = None, role: str = "") -> List[HostFile]:
    """The session's host files to read: all of them, or only `host` (a clear error naming the hosts
    there are when it is not one of them)."""
    if host is None:
        return list(session.hosts)
    chosen = session.host(host)
    if chosen is None:
        label = f"{role} host" if role else "host"
        raise AdvisorError(
            f"unknown {label} '{host}' in run '{session.run}'; its hosts: {', '.join(session.host_names)}"
        )
    return [chosen]


def load_run(
    session: Session, host: Optional[str] = None, role: str = "", on_progress: Optional[RunProgress] = None
) -> RunProfiles:
    """Read every host of the session, or only `host`; ProfileReadError for unreadable files.
    `on_progress` sees bytes read over all files (XSpace files report as they are read, traces once
    each is read)."""
    files = host_files(session, host, role)
    fmt = reader_of(session)
    total = sum(f.size_bytes for f in files)
    profiles = []
    before = 0
    for f in files:
        file_progress = None
        if on_progress is not None:
            def file_progress(done: int, _size: int, before: int = before) -> None:
                on_progress(min(total, before + done), total)

        profiles.append(fmt.read(f.path, f.host, file_progress))
        before += f.size_bytes
        if on_progress is not None:
            on_progress(min(total, before), total)
    return RunProfiles(run=session.run, profiles=profiles)


def is_profile_file(path: str) -> bool:
    """A path the CLI may be given instead of a logdir: one file of a format the Advisor reads."""
    return os.path.isfile(path) and file_format(os.path.basename(path)) is not None


def session_for_file(path: str) -> Session:
    """A one-host session for a profile file named on the command line (CLI only: the server never
    opens a path it is given), of the format its name says (registry.file_format: `*.xplane.pb` is
    XSpace; any `.json[.gz]` is read as a Kineto trace, since `export_chrome_trace` writes them under
    any name)."""
    path = os.path.abspath(path)
    name = os.path.basename(path)
    found = file_format(name)
    if found is None:
        raise AdvisorError(f"{path} is no profile the Advisor reads; it reads {what_the_advisor_reads()}")
    fmt, host = found
    stat = os.stat(path)
    directory = os.path.dirname(path)
    hosts = (HostFile(host, path, stat.st_size, stat.st_mtime_ns),)
    return Session(name, directory, directory, "", name, fmt.id, hosts, (name,), layout="file")
