"""Everything `doctor` can say, as one table: each finding's problem text and its fix.

Keys are stable (the doctor JSON's `findings`); templates are filled with keyword arguments by
sources/doctor/checks.py, which only decides which entries apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

TRACE_SNIPPET = """\
# Mark every training step with _r=1 so the built-in Profile tab can count steps:
for step, batch in enumerate(dataset):
    with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
        train_step(batch)
# JAX: wrap the step in jax.profiler.StepTraceAnnotation("train", step_num=step)"""

KERAS3_SNIPPET = """\
# Keras 3 model.fit marks steps as "Profiled batch" without _r=1; add a root marker per batch:
class StepMarker(keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        self._trace = tf.profiler.experimental.Trace("train", step_num=batch, _r=1)
        self._trace.__enter__()
    def on_train_batch_end(self, batch, logs=None):
        self._trace.__exit__(None, None, None)
model.fit(..., callbacks=[tensorboard_callback, StepMarker()])
# (The Advisor tab reads "Profiled batch" markers as they are.)"""

CUPTI_LOAD_FIX = """\
# Let the profiler load CUPTI (TensorFlow logs "Could not load dynamic library 'libcupti...'"):
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$LD_LIBRARY_PATH
# then capture the profile again"""

CUPTI_PRIVILEGES_FIX = """\
# CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: allow GPU profiling for non-admin users, then reboot:
echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf
# in a container: docker run --cap-add=SYS_ADMIN ... (or --privileged); then capture again"""

ROCM_TRACER_FIX = """\
# AMD GPU without kernels: the ROCm tracer (roctracer / rocprofiler) was not available to the
# profiler; install the ROCm profiler libraries, put them on LD_LIBRARY_PATH and capture again"""


PROFILER_SCHEDULE_SNIPPET = """\
# PyTorch: mark steps with a schedule and one prof.step() per training step (ProfilerStep#N):
with torch.profiler.profile(
    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
    on_trace_ready=torch.profiler.tensorboard_trace_handler(LOGDIR),
) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()"""

TORCH_CUDA_ACTIVITY_SNIPPET = """\
# PyTorch recorded no GPU activity: ask for it (CUDA also covers ROCm/HIP builds):
torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], ...)
# (Kineto also logs "CUPTI initialization failed" when libcupti cannot be loaded: then
#  export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$LD_LIBRARY_PATH)"""

TORCH_EMPTY_SNIPPET = """\
# PyTorch wrote a trace with no events: the profiler stopped before an active step.
# With a schedule, run at least wait + warmup + active steps and call prof.step() after each;
# without one, do the work inside the `with torch.profiler.profile(...)` block."""


@dataclass(frozen=True)
class Finding:
    """What the doctor says about one situation: the problem and the fix, as templates."""

    problem: str  # str.format template
    fix: str  # str.format template ("" when nothing can be done but capture again)
    is_problem: bool = True  # False: worth saying, nothing is wrong
    # True: only TensorBoard's run list or built-in Profile tab is affected; the Advisor reads the
    # session fully, so the tab shows it as a calm tip, not an alarm.
    profile_tab_only: bool = False


# Everything doctor can say. Keys are stable (JSON `findings`); templates get keyword arguments.
FINDINGS: Dict[str, Finding] = {
    "not_visible": Finding(
        "no events file in the run directory '{run_dir}': TensorBoard's run list (and Profile "
        "plugins before 2.18) do not show this run",
        "tb-advisor fix-logdir {logdir_q}",
        profile_tab_only=True,
    ),
    "loose_file": Finding(
        "not inside <logdir>/.../plugins/profile/<session>/: neither the Profile tab nor the Advisor "
        "tab lists it",
        "(cd {dir_q} && mkdir -p {session_q} && mv {files_q} {session_q}/)",
    ),
    "legacy_format": Finding(
        "only older-format profiler files ({files}): current Profile plugins (xprof) and the Advisor "
        "read <host>.xplane.pb files only",
        "capture the profile again with a current profiler (Keras TensorBoard(profile_batch=...), "
        "tf.profiler.experimental.start/stop or jax.profiler) to get <host>.xplane.pb files",
    ),
    "empty_session": Finding(
        "no profile files in the session directory{files_note}",
        "capture the profile again (an aborted capture leaves an empty session directory)",
    ),
    "corrupt": Finding(
        "{file} cannot be read: {error}",
        "capture the profile again: this file cannot be read",
    ),
    "keras3_markers_only": Finding(
        "steps are marked only by Keras 3 'Profiled batch' events without _r=1{hosts_note}: the built-in "
        "Profile tab's overview and input-pipeline pages will report zero steps",
        KERAS3_SNIPPET,
        profile_tab_only=True,
    ),
    "no_step_markers": Finding(
        "no step markers{hosts_note} (no _r=1 root events, no 'Profiled batch', no TraceContext): the "
        "built-in Profile tab's step-time analysis will be empty; the Advisor infers steps",
        TRACE_SNIPPET,
        profile_tab_only=True,
    ),
    "no_kernels": Finding(
        "{gpus} GPU plane(s) but no kernels recorded on any GPU{hosts_note}: the GPU tracer "
        "(CUPTI) was not loaded or not permitted, so device time is missing",
        CUPTI_LOAD_FIX,
    ),
    "no_kernels_amd": Finding(
        "{gpus} AMD GPU plane(s) but no kernels recorded on any GPU{hosts_note}",
        ROCM_TRACER_FIX,
    ),
    "cupti_privileges": Finding(
        "the profiler reported {message!r}: GPU tracing was refused", CUPTI_PRIVILEGES_FIX
    ),
    "cupti_error": Finding("the profiler reported a GPU tracer error: {message!r}", CUPTI_LOAD_FIX),
    "profiler_errors": Finding("the profiler recorded errors: {message!r}", "", is_problem=True),
    "idle_gpus": Finding("{idle} of {gpus} GPUs recorded no activity{hosts_note}", "", is_problem=False),
    "loop_steps": Finding(
        "no step markers{hosts_note}, but TensorFlow executor iterations (iter_num/group_id), which "
        "the built-in Profile tab can group into steps",
        "",
        is_problem=False,
    ),
    # PyTorch (Kineto) traces
    "torch_empty_trace": Finding(
        "{file}: the trace holds no events{hosts_note}: the profiler was stopped before it recorded a "
        "step (a schedule whose active steps were never reached, or no work inside the profile block)",
        TORCH_EMPTY_SNIPPET,
    ),
    "torch_no_gpu_events": Finding(
        "{what}, but no GPU kernels or copies were recorded{hosts_note}: CUDA activity was not requested "
        "(activities without ProfilerActivity.CUDA) or the GPU tracer (CUPTI/roctracer) failed",
        TORCH_CUDA_ACTIVITY_SNIPPET,
    ),
    "torch_no_profiler_steps": Finding(
        "no ProfilerStep#N ranges{hosts_note}: prof.step() was never called under a schedule, so steps "
        "are not marked; the Advisor infers them",
        PROFILER_SCHEDULE_SNIPPET,
        profile_tab_only=True,
    ),
    "torch_outside_handler": Finding(
        "PyTorch trace(s) {files} not named <worker>.<timestamp>.pt.trace.json[.gz] "
        "(prof.export_chrome_trace writes any name): no tab lists them",
        "(cd {dir_q} && {moves}), or write traces with on_trace_ready="
        "torch.profiler.tensorboard_trace_handler(dir)",
    ),
}

STEP_SOURCE_ORDER = ("root_marker", "keras3_marker", "legacy_marker", "profiler_step")
