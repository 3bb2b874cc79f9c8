"""The TensorBoard plugin: a loader that takes flags, and a thin plugin that wires discovery,
markers and the HTTP API together.

`is_active()` is called on every plugins-listing request, so it only reads the in-memory scan.
Scanning (and writing `.profile-empty` markers) happens on a background thread started by load().
"""

from __future__ import annotations

import argparse
import logging
from typing import Any, Dict

from tensorboard.plugins import base_plugin

from tb_plugin_advisor.readers import guarded_io
from tb_plugin_advisor.report.disk_cache import choose_directory, configure_dir
from tb_plugin_advisor.sources.live import LiveDiscovery
from tb_plugin_advisor.sources.markers import MarkerWriter
from tb_plugin_advisor.views.server.analysis_service import DEFAULT_TASKS_PER_WORKER, AnalysisService
from tb_plugin_advisor.views.server.api import AdvisorApi
from tb_plugin_advisor.views.server.trace_route import LIMITS as TRACE_LIMITS

logger = logging.getLogger(__name__)

PLUGIN_NAME = "advisor"
TAB_NAME = "Advisor"
FIRST_SCAN_WAIT_S = 2.0  # load() waits this long for the first scan so the tab shows at once

DEFAULTS: Dict[str, Any] = {
    "advisor_write_markers": True,
    "advisor_reload_interval": 30.0,
    "advisor_workers": 2,
    "advisor_cache_size": 32,
    "advisor_cache_mb": 256,
    "advisor_worker_tasks": DEFAULT_TASKS_PER_WORKER,
    "advisor_wait": 2.0,
    "advisor_max_profile_mb": 512.0,
    "advisor_dask_scheduler": "",
    "advisor_analysis_timeout": 600.0,
    "advisor_cache_dir": "",
    "advisor_trace_downloads": TRACE_LIMITS.downloads,
    "advisor_trace_stall": TRACE_LIMITS.stall_s,
}


def parse_bool(text: str) -> bool:
    value = str(text).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


class AdvisorLoader(base_plugin.TBLoader):
    """Entry point `advisor = tb_plugin_advisor.plugin:AdvisorLoader` (group tensorboard_plugins)."""

    def define_flags(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("advisor plugin")
        group.add_argument(
            "--advisor_write_markers",
            type=parse_bool,
            nargs="?",
            const=True,
            default=DEFAULTS["advisor_write_markers"],
            metavar="BOOL",
            help="Write an events.out.tfevents.*.profile-empty marker next to plugins/profile/ in run "
            "directories that have no events file, so TensorBoard's own run list shows those profile "
            "runs (default true; the only file the Advisor ever writes into a logdir).",
        )
        group.add_argument(
            "--advisor_reload_interval",
            type=float,
            default=DEFAULTS["advisor_reload_interval"],
            metavar="SECONDS",
            help="How often the Advisor looks for new profile sessions under the logdir "
            "(default 30; 0 scans once at startup and then only when an unknown run is requested).",
        )
        group.add_argument(
            "--advisor_workers",
            type=int,
            default=DEFAULTS["advisor_workers"],
            metavar="N",
            help="Worker processes that analyse profiles in the background, outside the server's "
            "process so it never stalls (default 2).",
        )
        group.add_argument(
            "--advisor_worker_tasks",
            type=int,
            default=DEFAULTS["advisor_worker_tasks"],
            metavar="N",
            help="Analyses a worker process runs at most before it is replaced (default "
            f"{DEFAULT_TASKS_PER_WORKER}). A worker that an analysis left holding memory (a large "
            "profile's) is replaced at once, giving that memory back to the OS.",
        )
        group.add_argument(
            "--advisor_cache_size",
            type=int,
            default=DEFAULTS["advisor_cache_size"],
            metavar="N",
            help="Analysis results kept in memory (default 32).",
        )
        group.add_argument(
            "--advisor_cache_mb",
            type=float,
            default=DEFAULTS["advisor_cache_mb"],
            metavar="MB",
            help="Memory for kept analysis results, serialised and gzipped (default 256; the newest "
            "result is always kept).",
        )
        group.add_argument(
            "--advisor_wait",
            type=float,
            default=DEFAULTS["advisor_wait"],
            metavar="SECONDS",
            help="How long a report/diff request waits for its analysis before answering 202 "
            '{"status": "running"} (the tab then polls; default 2).',
        )

        group.add_argument(
            "--advisor_max_profile_mb",
            type=float,
            default=DEFAULTS["advisor_max_profile_mb"],
            metavar="MB",
            help="Largest profile the Advisor reads, in MB after decompression (default 512: the "
            "report peaks near 3x this); larger files get a clear error instead of exhausting memory.",
        )

        group.add_argument(
            "--advisor_analysis_timeout",
            type=float,
            default=DEFAULTS["advisor_analysis_timeout"],
            metavar="SECONDS",
            help="Time budget of one analysis (default 600); past it the worker is stopped and "
            "replaced and the request answers 504, so a hung file system cannot hold the workers.",
        )

        group.add_argument(
            "--advisor_dask_scheduler",
            default=DEFAULTS["advisor_dask_scheduler"],
            metavar="tcp://HOST:PORT",
            help="Analyse the hosts of multi-host runs on this dask.distributed cluster instead of a "
            "local process pool (pip install 'tb-plugin-advisor[dask]'; its workers must be able to "
            "read the logdir). Default: none; Dask is then never imported.",
        )

        group.add_argument(
            "--advisor_cache_dir",
            default=DEFAULTS["advisor_cache_dir"],
            metavar="DIR|off",
            help="Keep each analysed run's report in DIR, so a restart or a trend over many captures "
            "does not read the profiles again; 'off' keeps nothing on disk. Default: "
            "$TB_ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/tb-plugin-advisor (never the logdir).",
        )

        group.add_argument(
            "--advisor_trace_downloads",
            type=int,
            default=DEFAULTS["advisor_trace_downloads"],
            metavar="N",
            help="Profile files the tab's trace route serves at once (default 4); more requests are "
            "answered 503 with Retry-After. Each costs a 256 KB buffer, whatever the file's size.",
        )
        group.add_argument(
            "--advisor_trace_stall",
            type=float,
            default=DEFAULTS["advisor_trace_stall"],
            metavar="SECONDS",
            help="A trace download whose client takes no byte for this long is dropped, freeing its "
            "place (default 60).",
        )

    def load(self, context: base_plugin.TBContext) -> AdvisorPlugin:
        return AdvisorPlugin(context)


def _flag(context: base_plugin.TBContext, name: str) -> Any:
    return getattr(getattr(context, "flags", None), name, DEFAULTS[name])


class AdvisorPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self.logdir = getattr(context, "logdir", None) or ""
        if not self.logdir and getattr(getattr(context, "flags", None), "logdir_spec", ""):
            logger.warning("advisor: --logdir_spec is not supported; start TensorBoard with --logdir")
        try:
            guarded_io.configure(float(_flag(context, "advisor_max_profile_mb")), export=True)
        except ValueError as exc:
            logger.warning("advisor: --advisor_max_profile_mb ignored: %s", exc)
        self.markers = MarkerWriter(enabled=bool(_flag(context, "advisor_write_markers")))
        # before the analysis service starts its workers: they inherit the directory
        self.cache_dir, note, memory = choose_directory(
            configure_dir(str(_flag(context, "advisor_cache_dir") or "")), [self.logdir])
        for said in (note, memory):
            if said:  # once, here: the workers find the same directory without a word
                logger.warning("advisor: %s", said)
        self.discovery = LiveDiscovery(
            self.logdir,
            interval_s=float(_flag(context, "advisor_reload_interval")),
            on_scan=self.markers,
        )
        self.service = AnalysisService(
            workers=int(_flag(context, "advisor_workers")),
            cache_size=int(_flag(context, "advisor_cache_size")),
            cache_bytes=int(float(_flag(context, "advisor_cache_mb")) * 1024 * 1024),
            wait_s=float(_flag(context, "advisor_wait")),
            tasks_per_worker=int(_flag(context, "advisor_worker_tasks")),
            scheduler=str(_flag(context, "advisor_dask_scheduler") or "") or None,
            task_timeout_s=float(_flag(context, "advisor_analysis_timeout")),
        )
        downloads = TRACE_LIMITS.with_flags(int(_flag(context, "advisor_trace_downloads")),
                                            float(_flag(context, "advisor_trace_stall")))
        self.api = AdvisorApi(self.discovery, self.service, logdir=self.logdir, downloads=downloads)
        if self.logdir:
            self.discovery.start()
            self.discovery.wait_ready(FIRST_SCAN_WAIT_S)

    def get_plugin_apps(self):
        return self.api.apps()

    def is_active(self) -> bool:
        return bool(self.discovery.scan.sessions)

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name=TAB_NAME)
