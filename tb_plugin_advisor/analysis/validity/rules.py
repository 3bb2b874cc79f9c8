"""The validity rules: one record per way a trace can fail to support an analysis, in one table.

A rule reads the trace's facts (analysis/validity/trace_facts.py), says whether it holds, which
analyses it affects and how (degraded: the number is shown with a caveat; unsupported: the number is
withheld), the reason in words with the figure measured in the trace, and the capture setting that
fixes it for each framework. analysis/validity/matrix.py turns the rules that hold into one row per
analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.validity.clock_offset import HostClocks
from tb_plugin_advisor.analysis.validity.trace_facts import TraceFacts
from tb_plugin_advisor.formatting import format_number, format_pct

SUPPORTED, DEGRADED, UNSUPPORTED = "supported", "degraded", "unsupported"
STATUSES = (SUPPORTED, DEGRADED, UNSUPPORTED)  # in order of severity

# Every analysis of one host the Advisor runs, as the matrix names it (its rows, in this order).
ANALYSES: Tuple[str, ...] = (
    "steps", "step_time_breakdown", "input_pipeline", "precision", "tensor_cores", "kernel_stats",
    "memory", "roofline", "collectives", "evidence_spans", "op_attribution",
)

# The capture settings the fixes name, per framework (signals.framework: pytorch | tf | jax).
PROFILER_ACTIVITIES = ("record the device: torch.profiler.profile(activities=[ProfilerActivity.CPU, "
                       "ProfilerActivity.CUDA])")
_SCHEDULE = "torch.profiler.schedule(wait=1, warmup=1, active=5)"


@dataclass(frozen=True)
class ValidityRule:
    """One way a trace fails an analysis. `holds` reads the facts (a host's TraceFacts for RULES, the
    run's HostClocks for RUN_RULES); `affects` maps an analysis to the status the rule gives it;
    `reason` words it with the measured figure; `fix` per framework (the key "any" serves every
    framework without its own entry)."""

    id: str
    holds: Callable[[Any], bool]
    affects: Dict[str, str]
    reason: Callable[[Any], str]
    fix: Dict[str, str]

    def fix_for(self, framework: str) -> str:
        return self.fix.get(framework, self.fix.get("any", ""))


def _share(f: TraceFacts) -> float:
    return 100.0 * (f.launch_share or 0.0)


def _clipped(f: TraceFacts) -> int:
    return f.clipped_host_events + f.clipped_device_events


def _clipped_pct(f: TraceFacts) -> float:
    events = f.host_events + f.device_events
    return 100.0 * _clipped(f) / events if events else 0.0


NO_DEVICE_EVENTS = ValidityRule(
    "no_device_events",
    lambda f: f.gpu_planes > 0 and f.device_events == 0,
    {"step_time_breakdown": DEGRADED, "precision": UNSUPPORTED, "tensor_cores": UNSUPPORTED,
     "kernel_stats": UNSUPPORTED, "roofline": UNSUPPORTED, "op_attribution": UNSUPPORTED},
    lambda f: (f"The trace has {format_number(f.gpu_planes)} GPU plane(s) but no kernel, copy or memset on "
               "them: the device's activity was not recorded (CUPTI)."),
    {"pytorch": PROFILER_ACTIVITIES + ", with CUPTI usable by the user (no ERR_NVGPUCTRPERM)",
     "any": "Let the profiler use CUPTI: libcupti on LD_LIBRARY_PATH, and profiling allowed for the user"},
)
NO_LAUNCH_CORRELATION = ValidityRule(
    "no_launch_correlation",
    lambda f: f.device_events > 0 and f.launch_share is not None and f.launch_share == 0.0,
    {"steps": DEGRADED, "op_attribution": UNSUPPORTED, "roofline": UNSUPPORTED},
    lambda f: (f"None of the {format_number(f.device_events)} device events names the host call that "
               "launched it (no launch correlation): no kernel can be tied to a step or an op, so steps "
               "are timed on the host's clock and the ops' device time is unknown."),
    {"pytorch": "Export the trace whole from torch.profiler (tensorboard_trace_handler or "
                "prof.export_chrome_trace), without stripping its flow events or `correlation` args",
     "any": "Capture the host and the device in one profile (tf.profiler.experimental.start / "
            "jax.profiler.trace), so each kernel keeps its launch's correlation id"},
)
PARTIAL_LAUNCH_CORRELATION = ValidityRule(
    "partial_launch_correlation",
    lambda f: f.launch_share is not None and 0.0 < f.launch_share < th.DEVICE_CLOCK_MIN_SHARE,
    {"steps": DEGRADED, "op_attribution": DEGRADED},
    lambda f: (f"Only {format_pct(_share(f))} of the device events during the steps are tied to a launch "
               "inside a step (the rest has no launch in the trace): steps stay on the host's clock and "
               "ops miss the rest of their device time."),
    {"any": "Start the profiler before the step that launches the work (a CUDA graph replayed from "
            "outside the capture has no launch in it)"},
)
NO_STEPS = ValidityRule(
    "no_steps",
    lambda f: f.steps == 0,
    {"steps": UNSUPPORTED, "step_time_breakdown": DEGRADED, "input_pipeline": DEGRADED},
    lambda f: "The trace has no step markers and no repeating work to infer steps from: nothing is per step.",
    {"pytorch": "Call prof.step() at the end of every training step, with " + _SCHEDULE,
     "tf": "Mark each step: with tf.profiler.experimental.Trace('train', step_num=step, _r=1)",
     "jax": "Mark each step: with jax.profiler.StepTraceAnnotation('train', step_num=step)",
     "any": "Mark each training step in the profiled program"},
)
INFERRED_STEPS = ValidityRule(
    "inferred_steps",
    lambda f: f.step_source == "inferred",
    {"steps": DEGRADED},
    lambda f: (f"No step markers: the {format_number(f.steps)} steps were inferred from the repeating "
               "work, so their bounds are the Advisor's guess."),
    NO_STEPS.fix,
)
FEW_STEPS = ValidityRule(
    "few_steps",
    lambda f: 0 < f.steady_steps < th.FEW_STEPS,
    {"steps": DEGRADED},
    lambda f: (f"Only {format_number(f.steady_steps)} steady step(s) (warm-up and cut-off steps left out): "
               f"averages over fewer than {format_number(th.FEW_STEPS)} steps are noisy."),
    {"pytorch": f"Profile more active steps: {_SCHEDULE}",
     "tf": "Profile more steps: tf.profiler.experimental.start before, stop after at least "
           f"{th.FEW_STEPS} steps past the warm-up",
     "any": f"Profile at least {th.FEW_STEPS} steps past the warm-up"},
)
CUT_OFF_STEPS = ValidityRule(
    "cut_off_steps",
    lambda f: f.cut_off_steps > 0,
    {"steps": DEGRADED},
    lambda f: (f"The end of the capture cut off the device work of {format_number(f.cut_off_steps)} "
               "step(s): they are left out of the averages."),
    {"pytorch": "Call prof.step() after the last step too, so the profiler waits for its kernels",
     "any": "Stop the profiler after the device has finished the last profiled step (sync first)"},
)
STEPS_WITHOUT_DEVICE_WORK = ValidityRule(
    "steps_without_device_work",
    lambda f: f.steps_without_device_work > 0,
    {"steps": DEGRADED},
    lambda f: (f"{format_number(f.steps_without_device_work)} step(s) launched no device work the trace "
               "can tie to them: their device time is unknown."),
    {"pytorch": PROFILER_ACTIVITIES, "any": "Profile steps that run on the device"},
)
NO_SHAPES = ValidityRule(
    "no_shapes",
    lambda f: f.framework == "pytorch" and f.shaped_ops == 0 and f.flops_ops == 0 and f.device_events > 0,
    {"roofline": UNSUPPORTED, "tensor_cores": DEGRADED},
    lambda f: ("No op carries its input shapes (`Input Dims`) or a FLOP count: FLOPs, MFU and the roofline "
               "cannot be computed, and Tensor Core eligibility is judged from kernel names alone."),
    {"pytorch": "torch.profiler.profile(record_shapes=True, with_flops=True)"},
)
NO_MEMORY_RECORDS = ValidityRule(
    "no_memory_records",
    lambda f: f.memory_records == 0,
    {"memory": UNSUPPORTED},
    lambda f: "The trace holds no allocator records: memory use over time and its peak are unknown.",
    {"pytorch": "torch.profiler.profile(profile_memory=True)",
     "tf": "Keep tf.profiler.experimental.ProfilerOptions(host_tracer_level=2), the default: at 1 TensorFlow "
          "records no allocator events",
     "jax": "JAX records device memory in a separate profile: jax.profiler.save_device_memory_profile"},
)
CLIPPED_EVENTS = ValidityRule(
    "clipped_events",
    lambda f: _clipped_pct(f) > th.CLIPPED_EVENTS_DEGRADED_PCT,
    {"evidence_spans": DEGRADED},
    lambda f: (f"{format_pct(_clipped_pct(f))} of the events ({format_number(_clipped(f))}) overlapped a "
               "neighbour on their thread or stream and were cut to nest: they cannot be shown as evidence, "
               "and their own time excludes the overlap."),
    {"pytorch": "Profile without with_stack=True unless Python frames are needed (their frames straddle "
                "the steps)",
     "any": "Nothing to change in the capture: overlapping events are the profiler's own"},
)

RULES: Tuple[ValidityRule, ...] = (
    NO_DEVICE_EVENTS, NO_LAUNCH_CORRELATION, PARTIAL_LAUNCH_CORRELATION, NO_STEPS, INFERRED_STEPS, FEW_STEPS,
    CUT_OFF_STEPS, STEPS_WITHOUT_DEVICE_WORK, NO_SHAPES, NO_MEMORY_RECORDS, CLIPPED_EVENTS,
)


# -- the run: several hosts --------------------------------------------------------------------------

# The row only a run of several hosts has (report/combine.py adds it after ANALYSES).
MULTI_HOST = "multi_host"


def _skewed(c: HostClocks) -> bool:
    return c.skew_us is not None and c.skew_us > th.CLOCK_SKEW_DEGRADED_US


HOST_CLOCKS_DISAGREE = ValidityRule(
    "host_clocks_disagree",
    _skewed,
    {MULTI_HOST: DEGRADED},
    lambda c: (f"The hosts' clocks disagree by {format_number(c.skew_us)} µs, measured on the ends of "
               f"{format_number(c.shared_ends)} collective calls they share: a timestamp compared across "
               "hosts is off by as much (step times, stragglers and the per-host figures compare durations "
               "and are unaffected)."),
    {"any": "Synchronise the hosts' clocks (chrony or PTP) before profiling; the offsets are in "
            "validity.clock_offset_us"},
)

RUN_RULES: Tuple[ValidityRule, ...] = (HOST_CLOCKS_DISAGREE,)
