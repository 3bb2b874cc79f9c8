"""Rules about the host handing the device its work one small piece at a time: many tiny kernels or a
launch-bound step (XLA in TF or JAX, torch.compile and CUDA graphs in PyTorch), and TF ops dispatched
one by one from Python (`host.tf_function`). What compiling, fusing or capturing the step fixes;
each fix shows its gain as launch and idle time (`kernel_launch`). Each check reads only `Facts`."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from tb_plugin_advisor.advice import gains
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import PYTORCH, Fired, Rule, Snippets, launches_fell
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct

# The step the launches hold up, and the kernels it runs.
LAUNCH_EVIDENCE = ("worst_step", "slowest_kernel")


def small_kernels(f: Facts) -> Optional[Tuple[str, str]]:
    """Many short kernels or a step held up by launches: (severity, evidence without a full stop).
    What compilation (XLA, torch.compile) fixes; the framework rules add their own words."""
    launch = f.breakdown_pct.get("kernel_launch", 0.0)
    many_small = (
        f.kernels_per_step >= th.XLA_MIN_KERNELS_PER_STEP and f.mean_kernel_us < th.XLA_MAX_MEAN_KERNEL_US
    )
    if not (many_small or launch >= th.OVERHEAD_MODERATE_PCT):
        return None
    severity = "high" if f.bottleneck == "launch" else "medium"
    return severity, (
        f"{fixed(f.kernels_per_step, 0)} kernels per step, {fixed(f.mean_kernel_us, 1)} µs on average; "
        f"kernel launch {format_pct(launch)} of the step"
    )


def launch_bound_xla(f: Facts) -> Iterator[Fired]:
    """JAX/XLA on an accelerator whose step is launch-bound: the verdict says so (kernel launch on the
    critical path), or many tiny kernels leave the device idle between them."""
    if not f.device_kind or (f.framework != "jax" and not f.xla_compiled) or not f.step_count:
        return
    tiny = 0 < f.median_kernel_us < th.LAUNCH_BOUND_MAX_MEDIAN_US
    many_tiny = f.kernels_per_step >= th.LAUNCH_BOUND_MIN_KERNELS and tiny
    idle = f.device_idle_pct >= th.LAUNCH_BOUND_MIN_IDLE_PCT
    if not (f.bottleneck == "launch" or (many_tiny and idle)):
        return
    very_idle = f.device_idle_pct >= 2 * th.LAUNCH_BOUND_MIN_IDLE_PCT
    severity = "high" if f.bottleneck == "launch" or very_idle else "medium"
    launch = f.breakdown_pct.get("kernel_launch", 0.0)
    yield Fired(severity, (
        f"{fixed(f.kernels_per_step, 0)} kernels per step with a median of "
        f"{fixed(f.median_kernel_us, 1)} µs; kernel "
        f"launch {format_pct(launch)} of the step and the device idle {format_pct(f.device_idle_pct)} of it."
    ))


LAUNCH_BOUND_XLA = Rule(
    id="compile.launch_bound_xla",
    title="Give the GPU bigger pieces of work per launch",
    message="The step runs many tiny XLA kernels and the device waits between them for the host to "
    "launch the next. Jit a larger function (the whole train step, several steps with lax.scan or "
    "lax.fori_loop), use a larger batch, let XLA record command buffers / CUDA graphs, and avoid "
    "host round-trips inside the loop.",
    check=launch_bound_xla,
    gain=gains.launch_gaps,
    evidence=LAUNCH_EVIDENCE,
    snippets=Snippets(
        tf="# TF + XLA: compile the whole step\n"
        "@tf.function(jit_compile=True)\ndef train_step(x, y): ...",
        jax="@jax.jit\ndef train_steps(state, batches):  # several steps per launch\n"
        "    return jax.lax.scan(train_step, state, batches)\n"
        "# XLA command buffers / CUDA graphs (XLA_FLAGS):\n"
        "#   --xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL  (command types to capture)\n"
        "#   --xla_gpu_graph_min_graph_size=1  (capture short kernel sequences too)",
    ),
    outcome=launches_fell(),
)


def xla(f: Facts) -> Iterator[Fired]:
    if f.device_kind != "GPU" or f.framework != "tf" or f.xla_compiled or not f.step_count:
        return
    fired = small_kernels(f)
    if fired:
        yield Fired(fired[0], f"{fired[1]}; no XLA-compiled kernels.")


XLA = Rule(
    id="compile.xla",
    title="Compile the step with XLA",
    message="The step launches many small kernels and the GPU waits between them. XLA fuses them into "
    "fewer, larger kernels.",
    check=xla,
    gain=gains.launch_gaps,
    evidence=LAUNCH_EVIDENCE,
    snippets=Snippets(
        tf="model.compile(optimizer, loss, jit_compile=True)\n"
        "# custom loop: @tf.function(jit_compile=True)\n# def train_step(x, y): ...",
    ),
    outcome=launches_fell(),
)


def tf_function(f: Facts) -> Iterator[Fired]:
    if f.eager_ops_per_step >= th.EAGER_OPS_PER_STEP and not f.compiled_step:
        severity = "high" if f.bottleneck in ("host", "launch") else "medium"
        yield Fired(severity, (
            f"{fixed(f.eager_ops_per_step, 0)} ops per step are dispatched one by one from Python "
            "(no compiled step function runs in the steps)."
        ))


TF_FUNCTION = Rule(
    id="host.tf_function",
    title="Compile the whole step instead of running ops one by one",
    message="Each op of the step is dispatched from Python separately; the host spends the step "
    "launching work. Tracing the step into one function removes the per-op overhead.",
    check=tf_function,
    gain=gains.launch_gaps,
    evidence=("worst_step",),
    snippets=Snippets(
        tf="@tf.function  # add jit_compile=True to also fuse kernels\ndef train_step(x, y):\n    ...",
        jax="@jax.jit\ndef train_step(state, batch):\n    ...  # jit the whole step, not each op",
    ),
    outcome=launches_fell(),
)


def torch_compile(f: Facts) -> Iterator[Fired]:
    """Many small kernels or a launch-bound step on a GPU, in eager PyTorch."""
    if f.framework != PYTORCH or f.device_kind != "GPU" or not f.step_count:
        return
    fired = small_kernels(f)
    if fired:
        yield Fired(fired[0], f"{fired[1]}.")


TORCH = Rule(
    id="compile.torch",
    title="Compile the model with torch.compile (and CUDA graphs)",
    message="The step launches many small kernels one by one from Python and the GPU waits between "
    "them. torch.compile fuses them; mode='reduce-overhead' also replays the step as a CUDA graph.",
    check=torch_compile,
    gain=gains.launch_gaps,
    evidence=LAUNCH_EVIDENCE,
    snippets=Snippets(pytorch=(
        "model = torch.compile(model)  # fuses small kernels\n"
        "# launch-bound and static shapes: also capture CUDA graphs\n"
        "model = torch.compile(model, mode='reduce-overhead')"
    )),
    outcome=launches_fell(),
)

# Registration order is the tie order among advice of equal severity and gain (advice/registry.py).
RULES: Tuple[Rule[Facts], ...] = (LAUNCH_BOUND_XLA, XLA, TF_FUNCTION, TORCH)
