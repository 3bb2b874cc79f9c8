"""The persistent analysis cache: each analysed run's report JSON kept on disk, so a trend over a
hundred captures, a second `tb-advisor` call and a TensorBoard restart do not read every profile again.

Where: `$TB_ADVISOR_CACHE_DIR`, else `$XDG_CACHE_HOME/tb-plugin-advisor`, else
`~/.cache/tb-plugin-advisor` — never the logdir (the Advisor writes nothing there but markers).
`TB_ADVISOR_CACHE_DIR=off` (or `tb-advisor … --no-cache`, `tensorboard --advisor_cache_dir off`)
turns it off.

Why it is safe to share: an entry is keyed by the run's name, every host file's path, size and
mtime, the host chosen and the Advisor's version *and code* (a fingerprint of its installed files),
so a rewritten profile or an upgraded Advisor never reads an old answer; the key is stored inside the
entry and checked, so a hash collision or a foreign file is ignored. Entries are written to a
temporary file and renamed into place (atomic on POSIX and Windows), so concurrent TensorBoards and
CLIs never see half an entry; the last writer wins with identical content. A corrupt entry is
ignored and rebuilt, never an error. When the directory cannot be written (read-only home, quota) the
cache keeps entries in memory for this process and says so in `degraded`. The directory is bounded
(`TB_ADVISOR_CACHE_MB`, default 512): past it the least recently used entries are deleted.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Tuple

from tb_plugin_advisor import __version__

ENV_DIR = "TB_ADVISOR_CACHE_DIR"
ENV_MB = "TB_ADVISOR_CACHE_MB"
OFF_WORDS = ("off", "none", "0", "false", "no")
APP_DIR = "tb-plugin-advisor"
ENTRY_DIR = "reports"
ENTRY_SUFFIX = ".json.gz"
FORMAT = 1  # bump when an entry's layout changes
DEFAULT_MB = 512.0
MEMORY_ENTRIES = 256  # the in-memory fallback's bound
STALE_TMP_S = 3600.0  # a temporary file this old was left by a killed writer
# An entry larger than this once decompressed is ignored (rebuilt): entries are read in the server
# process too, which must never hold a decompression bomb. Reports of the largest profiles are a few MB.
MAX_ENTRY_BYTES = 128 * 1024 * 1024

_fingerprint: Optional[str] = None


def code_fingerprint() -> str:
    """The Advisor's version and a hash of its installed code files' names, sizes and mtimes: a
    development checkout changes it on every edit, so no cached report outlives the code that made it."""
    global _fingerprint
    if _fingerprint is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        digest = hashlib.sha256(__version__.encode())
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "static", "sample_logdir"))
            for name in sorted(files):
                if name.endswith((".py", ".so", ".pyd")):
                    st = os.stat(os.path.join(folder, name))
                    rel = os.path.relpath(os.path.join(folder, name), root)
                    digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _fingerprint = f"{__version__}+{digest.hexdigest()[:16]}"
    return _fingerprint


def resolve_dir(option: Optional[str] = None) -> Optional[str]:
    """The cache directory: `option` (a flag), else the environment, else the user's cache dir;
    None when turned off."""
    chosen = option if option is not None else os.environ.get(ENV_DIR)
    if chosen is not None:
        chosen = chosen.strip()
        if not chosen or chosen.lower() in OFF_WORDS:
            return None
        return os.path.abspath(os.path.expanduser(chosen))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), APP_DIR)


def _limit_bytes() -> int:
    try:
        mb = float(os.environ.get(ENV_MB, DEFAULT_MB))
    except ValueError:
        mb = DEFAULT_MB
    return max(0, int(mb * 1024 * 1024))


def entry_key(session: Any, host: Optional[str]) -> Optional[List[Any]]:
    """What identifies a run's report, or None when a file's mtime is unknown (some remote file
    systems): without it a rewritten file could not be told apart, so such runs are not cached."""
    files = []
    for f in session.hosts:
        if host is not None and f.host != host:
            continue
        if f.mtime_ns is None:
            return None
        files.append([f.host, f.path, int(f.size_bytes), int(f.mtime_ns)])
    if not files:
        return None
    return [FORMAT, code_fingerprint(), session.run, session.format, host, files]


class ReportCache:
    """Report dicts by entry_key, on disk (or in memory when the disk refuses); thread-safe."""

    def __init__(self, directory: Optional[str], limit_bytes: Optional[int] = None):
        self.directory = directory
        self.limit_bytes = _limit_bytes() if limit_bytes is None else limit_bytes
        self.degraded: Optional[str] = None  # why entries live only in memory, when they do
        self.hits = self.misses = self.writes = self.ignored = 0
        self._memory: OrderedDict[str, Dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def _path(self, digest: str) -> str:
        return os.path.join(self.directory or "", ENTRY_DIR, digest + ENTRY_SUFFIX)

    @staticmethod
    def _digest(key: List[Any]) -> str:
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()

    def get(self, session: Any, host: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The cached report, or None (a miss, a foreign or corrupt entry)."""
        key = entry_key(session, host) if self.enabled else None
        if key is None:
            return None
        digest = self._digest(key)
        with self._lock:
            if digest in self._memory:
                self._memory.move_to_end(digest)
                self.hits += 1
                return self._memory[digest]
        path = self._path(digest)
        try:
            with gzip.open(path, "rb") as f:
                text = f.read(MAX_ENTRY_BYTES + 1)
            if len(text) > MAX_ENTRY_BYTES:
                raise ValueError("entry larger than MAX_ENTRY_BYTES")
            entry = json.loads(text.decode("utf-8"))
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, EOFError, UnicodeDecodeError):  # torn, truncated, not gzip: rebuild
            self.ignored += 1
            self.misses += 1
            return None
        foreign = not isinstance(entry, dict) or entry.get("key") != key
        if foreign or not isinstance(entry.get("report"), dict):
            self.ignored += 1
            self.misses += 1
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        self.hits += 1
        return entry["report"]

    def put(self, session: Any, host: Optional[str], report: Dict[str, Any]) -> None:
        """Store a report; never raises (a cache that cannot write falls back to memory)."""
        key = entry_key(session, host) if self.enabled else None
        if key is None:
            return
        digest = self._digest(key)
        if self.degraded is None:
            try:
                self._write(digest, {"key": key, "written_at": time.time(), "report": report})
                self.writes += 1
                self._evict()
                return
            except (OSError, TypeError, ValueError) as e:
                self.degraded = (
                    f"cannot write the analysis cache in {self.directory} ({e}); keeping it in memory"
                )
        with self._lock:
            self._memory[digest] = report
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)

    def _write(self, digest: str, entry: Dict[str, Any]) -> None:
        folder = os.path.join(self.directory or "", ENTRY_DIR)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=ENTRY_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(
                fileobj=raw, mode="wb", compresslevel=5, mtime=0
            ) as f:
                f.write(json.dumps(entry, allow_nan=False).encode("utf-8"))
            os.replace(tmp, self._path(digest))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def entries(self) -> List[Tuple[str, int, float]]:
        """(path, size, mtime) of every entry and temporary file on disk."""
        folder = os.path.join(self.directory or "", ENTRY_DIR)
        out = []
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    out.append((e.path, st.st_size, st.st_mtime))
        except OSError:
            pass
        return out

    def _evict(self) -> None:
        """Delete least recently used entries past the size bound, and temporary files of writers
        that died; another process deleting the same file at once is fine."""
        now = time.time()
        kept = []
        for path, size, mtime in self.entries():
            if os.path.basename(path).startswith(".tmp-"):
                if now - mtime > STALE_TMP_S:
                    _unlink(path)
                continue
            kept.append((mtime, path, size))
        total = sum(size for _, _, size in kept)
        for _mtime, path, size in sorted(kept):
            if total <= self.limit_bytes or len(kept) <= 1:
                break
            _unlink(path)
            total -= size

    def stats(self) -> Dict[str, Any]:
        return {"directory": self.directory, "hits": self.hits, "misses": self.misses, "writes": self.writes,
                "ignored": self.ignored, "degraded": self.degraded}


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def configure_dir(option: Optional[str]) -> Optional[str]:
    """TensorBoard's `--advisor_cache_dir`: an empty value keeps the environment's choice; any other
    value (a directory, or "off") is exported to `$TB_ADVISOR_CACHE_DIR`, because the reports are
    analysed in worker processes started later, which resolve the directory from their environment.
    Returns the directory now in effect (None when the cache is off)."""
    if option is not None and option.strip():
        os.environ[ENV_DIR] = option.strip()
    return resolve_dir()


def open_cache(option: Optional[str] = None) -> ReportCache:
    """The cache at `option` / the environment / the user's cache dir (disabled when turned off)."""
    return ReportCache(resolve_dir(option))


def cached_report(
    cache: ReportCache, session: Any, host: Optional[str], build: Callable[[], Dict[str, Any]]
) -> Tuple[Dict[str, Any], bool]:
    """The report of `session` from the cache, else built and stored; (report, came from cache)."""
    hit = cache.get(session, host)
    if hit is not None:
        return hit, True
    report = build()
    cache.put(session, host, report)
    return report, False
