"""The tool outputs of older profilers (TensorFlow <= 2.1 and the old Cloud TPU tooling) in a
`plugins/profile/<session>/` directory: the session is real but holds no XSpace, so the Advisor lists
it and says why it cannot analyse it. There is no reader: a host's files are only counted."""

from __future__ import annotations

from typing import Optional

from tb_plugin_advisor.readers.formats.descriptor import SESSION_DIRECTORY, ProfileFormat

# One host's tool files end with these (`10.0.0.1.overview_page.pb`); the first that fits names it.
LEGACY_SUFFIXES = (
    ".trace.json.gz",
    ".trace.json",
    ".trace",
    ".overview_page.pb",
    ".overview_page.json",
    ".input_pipeline.pb",
    ".input_pipeline.json",
    ".tensorflow_stats.pb",
    ".kernel_stats.pb",
    ".memory_profile.json.gz",
    ".memory_viewer.json",
    ".pod_viewer.json",
    ".op_profile.json",
)


def legacy_host(name: str) -> Optional[str]:
    """`10.0.0.1.overview_page.pb` -> `10.0.0.1`; None when the file is no legacy tool output. A
    PyTorch `.pt.trace.json` ends like one too: the registry offers a name to the Kineto format first."""
    for suffix in LEGACY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _is_legacy(name: str) -> bool:
    return legacy_host(name) is not None


def _host(name: str) -> str:
    return legacy_host(name) or name


LEGACY_TOOLS = ProfileFormat(
    id="legacy",
    framework="tensorflow",
    names=_is_legacy,
    layout=SESSION_DIRECTORY,
    where_written="<logdir>/**/plugins/profile/<session>/<host>.trace.json.gz and other tool files",
    file_pattern="*.trace.json.gz, *.overview_page.pb, …",
    host_of=_host,
    not_read_because=(
        "only older-format profiler files ({files}); the Advisor reads <host>.xplane.pb files: capture "
        "the profile again with a current TensorFlow/JAX profiler"
    ),
    doctor_checks=("legacy_format",),
)
