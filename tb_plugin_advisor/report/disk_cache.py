"""The persistent analysis cache: each analysed run's report JSON kept on disk, so a trend over a
hundred captures, a second `tb-advisor` call and a TensorBoard restart do not read every profile again.

Where: `$TB_ADVISOR_CACHE_DIR`, else `$XDG_CACHE_HOME/tb-plugin-advisor`, else
`~/.cache/tb-plugin-advisor`. `TB_ADVISOR_CACHE_DIR=off` (or `tb-advisor … --no-cache`,
`tensorboard --advisor_cache_dir off`) turns it off.

It only ever touches its own files. The cache directory must be the Advisor's: one that holds its
tag (CACHEDIR.TAG naming tb-plugin-advisor, which backup tools also read as "skip me"), or an empty
or new one, which it then tags. A directory that holds anything else (`--cache-dir ~/work`, `.`,
`$HOME`) is not used: the cache goes to its own subdirectory `tb-plugin-advisor/` there and says so
once (`note`). A directory inside a logdir is refused outright (the Advisor writes nothing into a
logdir but its marker): the cache then lives in memory and says why (`degraded`). In the directory,
entries are `reports/<64 hex>.tbadv` and temporaries `reports/.tmp-<8>.tbadv`; nothing else there is
ever read, evicted or deleted, and `reports/` itself must be a real directory, not a link.

Why an entry can be trusted: it is keyed by the run's name, every host file's path, size and mtime,
the host chosen and the Advisor's version *and code* (a fingerprint of its installed files), so a
rewritten profile or an upgraded Advisor never reads an old answer. Each file starts with a header
(magic, format, payload length, BLAKE2b of the payload) checked before the payload is inflated;
the payload is gzip inflated under MAX_ENTRY_BYTES (guarded_io's bounded inflate), decoded as strict
JSON (no NaN or infinity, nesting bounded), its stored key compared, and the report checked against
the report's shape (report/schema.py). Entries are opened without following links and without
blocking, and only regular files are read: a FIFO, a device or a link at an entry's path is a miss,
never a hang. Anything that fails is ignored and rebuilt, never an error. Entries are written to a
temporary file and renamed into place (atomic on POSIX and Windows), so concurrent TensorBoards and
CLIs never see half an entry. When the directory cannot be written the cache keeps entries in memory
for this process and says so in `degraded`. The directory is bounded (`TB_ADVISOR_CACHE_MB`, default
512): past it the least recently used entries are deleted.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import re
import stat
import struct
import tempfile
import threading
import time
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import msgspec

from tb_plugin_advisor import __version__
from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import ProfileFile, ReadLimits, inflate
from tb_plugin_advisor.report.schema import shape_error

ENV_DIR = "TB_ADVISOR_CACHE_DIR"
ENV_MB = "TB_ADVISOR_CACHE_MB"
OFF_WORDS = ("off", "none", "0", "false", "no")
APP_DIR = "tb-plugin-advisor"  # the default directory's name, and the subdirectory of a shared one
ENTRY_DIR = "reports"
ENTRY_SUFFIX = ".tbadv"
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.tbadv")
TEMP_PREFIX = ".tmp-"
TEMP_NAME = re.compile(r"\.tmp-[a-z0-9_]{8}\.tbadv")  # tempfile.mkstemp's 8 characters
# What the Advisor wrote into reports/ before entries had a header: a directory holding only these
# is adopted (and tagged); the old files themselves are never read again.
OLD_NAME = re.compile(r"([0-9a-f]{64}|\.tmp-[a-z0-9_]{8})\.json\.gz")
TAG_NAME = "CACHEDIR.TAG"
TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
       b"# This file is a cache directory tag created by tb-plugin-advisor.\n"
       b"# For information about cache directory tags, see https://bford.info/cachedir/\n")
FORMAT = 2  # bump when an entry's layout changes
MAGIC = b"TBADVRC\x00"
HEADER = struct.Struct("<8sHQ16s")  # magic, FORMAT, payload bytes, BLAKE2b-128 of the payload
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
    """The cache directory asked for: `option` (a flag), else the environment, else the user's cache
    dir; None when turned off. `ReportCache` decides whether it may use it."""
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


# -- whose directory ---------------------------------------------------------------------------------


def _inside(path: str, roots: Sequence[str]) -> Optional[str]:
    """The root (a local logdir) that `path` lies in or is, by real paths; None when none."""
    real = os.path.realpath(path)
    for root in roots:
        if not root or "://" in root:
            continue
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return root
    return None


def _is_tag(path: str) -> bool:
    """Whether `path` is the Advisor's own cache tag (read without following a link or blocking)."""
    try:
        with ProfileFile(path, ReadLimits(max_profile_bytes=4096), follow_links=False) as f:
            return f.read(0, f.size) == TAG
    except ProfileReadError:
        return False


def _only_old_entries(folder: str) -> bool:
    """A real directory holding only the entries an earlier Advisor wrote (OLD_NAME) or its own."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        return all(OLD_NAME.fullmatch(n) or ENTRY_NAME.fullmatch(n) or TEMP_NAME.fullmatch(n)
                   for n in os.listdir(folder))
    except OSError:
        return False


def _claim(directory: str) -> Optional[str]:
    """Make `directory` the Advisor's (create and tag it) when it is new, empty, already tagged, or
    holds only an earlier Advisor's `reports/`; else why not, in words."""
    tag = os.path.join(directory, TAG_NAME)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if _is_tag(tag):
            return None
        names = os.listdir(directory)
    except OSError as e:
        return f"cannot use {directory} ({e.strerror or e})"
    # what a directory the Advisor made, or is making in another process at this moment, can hold
    ours = all((n == TAG_NAME and _is_tag(tag)) or TEMP_NAME.fullmatch(n)
               or (n == ENTRY_DIR and _only_old_entries(os.path.join(directory, ENTRY_DIR))) for n in names)
    if not ours:
        return f"{directory} holds files the Advisor did not write"
    try:
        _write_atomically(directory, TAG_NAME, TAG)
    except OSError as e:
        return f"cannot write in {directory} ({e.strerror or e})"
    return None


def _write_atomically(folder: str, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=ENTRY_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(folder, name))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def choose_directory(requested: Optional[str], logdirs: Sequence[str] = ()) -> Tuple[Optional[str], str, str]:
    """(the directory the cache uses or None, a note to say once, why it lives in memory) for the
    directory asked for. Refused inside a logdir; a directory holding others' files is left for its
    own subdirectory APP_DIR; one that cannot be written at all leaves the cache in memory."""
    if requested is None:
        return None, "", ""
    logdir = _inside(requested, logdirs)
    if logdir is not None:
        return None, "", (f"the cache directory {requested} is inside the logdir {logdir}, where the Advisor "
                          "writes nothing; keeping the cache in memory (give --cache-dir elsewhere)")
    why = _claim(requested)
    if why is None:
        return requested, "", ""
    own = os.path.join(requested, APP_DIR)
    again = _claim(own)
    if again is None:
        return own, f"{why}; the analysis cache is kept in {own}", ""
    if again.startswith("cannot") and why.startswith("cannot"):
        return None, "", f"{why}; keeping the cache in memory"
    return None, "", f"{why}, and so does {own}; keeping the cache in memory"


# -- entries -----------------------------------------------------------------------------------------


def encode_entry(key: List[Any], report: Dict[str, Any]) -> bytes:
    """An entry's bytes: the header, then the gzip of {"key", "written_at", "report"}."""
    text = json.dumps({"key": key, "written_at": time.time(), "report": report}, allow_nan=False)
    payload = gzip.compress(text.encode("utf-8"), compresslevel=5, mtime=0)
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return HEADER.pack(MAGIC, FORMAT, len(payload), digest) + payload


def decode_entry(path: str, key: List[Any]) -> Optional[Dict[str, Any]]:
    """The report stored at `path` under `key`, or None for anything else (missing, not a regular
    file, a link, a bad header or checksum, too large once inflated, not strict JSON, nested too
    deeply, another key, not the report's shape)."""
    limits = ReadLimits(max_profile_bytes=MAX_ENTRY_BYTES)
    try:
        with ProfileFile(path, limits, follow_links=False) as f:
            if f.size < HEADER.size:
                return None
            magic, fmt, length, digest = HEADER.unpack(f.read(0, HEADER.size))
            if magic != MAGIC or fmt != FORMAT or length != f.size - HEADER.size:
                return None
            payload = f.read(HEADER.size, f.size)
        if hashlib.blake2b(payload, digest_size=16).digest() != digest:
            return None
        entry = msgspec.json.decode(inflate(payload, path, limits))
    except (ProfileReadError, OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    report = entry.get("report")
    return report if shape_error(report) is None else None


def _replaceable(path: str) -> bool:
    """Whether an entry may be written at `path`: nothing is there, or a regular file (an entry of
    the Advisor's, named by its key's hash in its own directory). A FIFO, a device, a directory or a
    link someone put there is left alone, and that report is kept in memory instead."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _has_magic(path: str) -> bool:
    try:
        with ProfileFile(path, ReadLimits(max_profile_bytes=MAX_ENTRY_BYTES), follow_links=False) as f:
            return f.size >= HEADER.size and f.read(0, len(MAGIC)) == MAGIC
    except ProfileReadError:
        return False


class ReportCache:
    """Report dicts by entry_key, on disk (or in memory when the disk refuses); thread-safe.

    `directory` is the directory asked for; `logdirs` the logdirs it must not lie in. `note` says
    once where the cache went when the directory asked for holds others' files; `degraded` why the
    entries live only in memory."""

    def __init__(self, directory: Optional[str], limit_bytes: Optional[int] = None,
                 logdirs: Sequence[str] = ()):
        self.requested = directory
        self.directory, self.note, degraded = choose_directory(directory, logdirs)
        self.enabled = directory is not None
        self.limit_bytes = _limit_bytes() if limit_bytes is None else limit_bytes
        self.degraded: Optional[str] = degraded or None  # why entries live only in memory, when they do
        self.hits = self.misses = self.writes = self.ignored = 0
        self._memory: OrderedDict[str, Dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def folder(self) -> Optional[str]:
        return os.path.join(self.directory, ENTRY_DIR) if self.directory else None

    def _folder_is_real(self) -> bool:
        """reports/ is a directory, not a link (through a link, eviction would reach elsewhere)."""
        try:
            return stat.S_ISDIR(os.lstat(self.folder or "").st_mode)
        except OSError:
            return False

    def _path(self, digest: str) -> str:
        return os.path.join(self.folder or "", digest + ENTRY_SUFFIX)

    @staticmethod
    def _digest(key: List[Any]) -> str:
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()

    def get(self, session: Any, host: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The cached report, or None (a miss; a foreign, corrupt or ill-shaped entry is counted in
        `ignored` and rebuilt by the caller)."""
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
        if self.folder is None or not os.path.lexists(path) or not self._folder_is_real():
            self.misses += 1
            return None
        report = decode_entry(path, key)
        if report is None:
            self.ignored += 1
            self.misses += 1
            return None
        with contextlib.suppress(OSError, NotImplementedError):
            os.utime(path, follow_symlinks=False)  # recently used: evicted last (a link's own times)
        self.hits += 1
        return report

    def put(self, session: Any, host: Optional[str], report: Dict[str, Any]) -> None:
        """Store a report; never raises (a cache that cannot write falls back to memory)."""
        key = entry_key(session, host) if self.enabled else None
        if key is None:
            return
        digest = self._digest(key)
        if self.folder is not None and self.degraded is None and _replaceable(self._path(digest)):
            try:
                self._write(digest, encode_entry(key, report))
                self.writes += 1
                self._evict()
                return
            except (OSError, TypeError, ValueError) as e:
                self.degraded = (f"cannot write the analysis cache in {self.folder} ({e}); keeping it "
                                 "in memory")
        with self._lock:
            self._memory[digest] = report
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)

    def _write(self, digest: str, data: bytes) -> None:
        folder = self.folder or ""
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not self._folder_is_real():
            raise OSError(f"{folder} is not a directory of the Advisor's (a link?)")
        _write_atomically(folder, digest + ENTRY_SUFFIX, data)

    def entries(self) -> List[Tuple[str, int, float]]:
        """(path, size, mtime) of every entry and temporary file of the Advisor's (by name, regular
        files only, links not followed); nothing else in the folder."""
        out = []
        try:
            with os.scandir(self.folder or "") as it:
                for e in it:
                    if not (ENTRY_NAME.fullmatch(e.name) or TEMP_NAME.fullmatch(e.name)):
                        continue
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        out.append((e.path, st.st_size, st.st_mtime))
        except OSError:
            pass
        return out

    def _evict(self) -> None:
        """Delete least recently used entries past the size bound, and temporary files of writers
        that died; an entry is deleted only once its header says the Advisor wrote it. Another
        process deleting the same file at once is fine."""
        if not self._folder_is_real():
            return
        now = time.time()
        kept = []
        for path, size, mtime in self.entries():
            if os.path.basename(path).startswith(TEMP_PREFIX):
                if now - mtime > STALE_TMP_S:
                    _unlink(path)
                continue
            kept.append((mtime, path, size))
        total = sum(size for _, _, size in kept)
        left = len(kept)
        for _mtime, path, size in sorted(kept):
            if total <= self.limit_bytes or left <= 1:  # the newest entry stays, however large
                break
            if _has_magic(path):
                _unlink(path)
                total -= size
                left -= 1

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
    Returns the directory now asked for (None when the cache is off)."""
    if option is not None and option.strip():
        os.environ[ENV_DIR] = option.strip()
    return resolve_dir()


def open_cache(option: Optional[str] = None, logdirs: Sequence[str] = ()) -> ReportCache:
    """The cache at `option` / the environment / the user's cache dir (disabled when turned off),
    never inside one of `logdirs`."""
    return ReportCache(resolve_dir(option), logdirs=logdirs)

