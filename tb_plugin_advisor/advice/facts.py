"""What the advice engine sees and produces: `Facts` (numbers the analyses computed), the one
severity list, and the one advice type, `Recommendation`, which the recommendation rules and the
deeper views' finding rules both write (the rule record is in rule.py). Kept apart from the rules so
the rule modules and the engine import the types, not each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.advice.expected_gain import ExpectedGain
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan

SEVERITIES = ("high", "medium", "low")


@dataclass
class Facts:
    """What the rules may look at (filled by report/run.py from the analyses)."""

    framework: str = "unknown"  # tf | jax | pytorch | unknown
    # PyTorch (analysis/step_time/torch_signals.py)
    torch_dataloader: str = ""  # "single" (num_workers=0) | "multi" | ""
    torch_pageable_h2d_ms: float = 0.0
    torch_pageable_h2d_pct: float = 0.0
    torch_zero_grad_fills: float = 0.0
    input_wait_event: str = ""  # the host event the step waits in longest (PyTorch: the DataLoader)
    # what feeds the step (analysis/step_time/inputs.py): tf.data | dataloader | annotations | none
    input_kind: str = ""
    input_annotation: str = ""  # the user's input annotation the step waits in longest
    input_annotation_pct: float = 0.0  # every input annotation together, % of the step
    input_annotation_inside: str = ""  # what runs inside them longest, "host_batch 138 ms"
    device_kind: str = ""  # "GPU" | "TPU" | "" (CPU only)
    device_model: str = ""  # the first accelerator's model (its peaks: analysis/classify/device_peaks.py)
    step_ms: float = 0.0  # mean steady step
    breakdown_ms: Dict[str, float] = field(default_factory=dict)  # mean ms per step by category
    matrix_fp32_ms: float = 0.0  # eligible matmul/conv/attention time per step in plain fp32
    matrix_tf32_ms: float = 0.0  # … on TF32 Tensor Cores
    compute_capability: Optional[Tuple[int, int]] = None  # of the GPUs, when known
    breakdown_pct: Dict[str, float] = field(default_factory=dict)
    input_bound: str = "unknown"
    bottleneck: str = "unknown"
    step_count: int = 0
    step_source: str = "none"
    early_step_numbers: List[int] = field(default_factory=list)
    warmup_steps: int = 0  # leading steps left out of the averages
    # steps whose device work the capture's end cut off, named ("step 5"); out of the averages
    cut_off_steps: List[str] = field(default_factory=list)
    # tf.data
    dominant_stage: str = "unknown"
    sequential_map: Optional[bool] = None
    map_parallelism: Optional[int] = None
    prefetch: Optional[bool] = None
    cache: Optional[bool] = None
    interleave: Optional[bool] = None
    file_source: Optional[bool] = None  # TFRecord / text / fixed-length record files are read
    autotune: Optional[bool] = None
    # precision / Tensor Cores (shares of device compute time, %)
    precision_pct: Dict[str, float] = field(default_factory=dict)
    precision_verdict: str = "unknown"
    top_fp32_ops: List[str] = field(default_factory=list)
    fp32_matmul_pct: float = 0.0  # eligible matmul/conv time in plain fp32 (no TF32), % of device time
    # kernels
    kernels_per_step: float = 0.0
    mean_kernel_us: float = 0.0
    xla_compiled: bool = False
    transpose_pct: float = 0.0  # layout-transpose kernels, % of device compute time
    transpose_kernels: List[str] = field(default_factory=list)
    eager_ops_per_step: float = 0.0
    compiled_step: bool = False  # a tf.function / jitted function runs inside the steps
    # devices
    gpu_planes: int = 0
    active_devices: int = 0
    cupti_problem: str = ""  # id of the CUPTI problem found in XSpace errors/warnings ("" none)
    cupti_message: str = ""
    # bf16/fp16 on a CPU-only profile (analysis/precision/cpu_16bit.py): "" when 16-bit does not dominate
    cpu_16bit_dtype: str = ""
    cpu_16bit_native: Optional[bool] = None  # True only where the profile shows native 16-bit kernels
    cpu_16bit_evidence: str = ""
    # input preprocessing ops wherever they run (analysis/step_time/preprocessing.py)
    preprocessing_pct: float = 0.0  # CPU time per step, % of step wall time
    preprocessing_input_threads_ms: float = 0.0
    preprocessing_step_threads_ms: float = 0.0
    preprocessing_ops: List[str] = field(default_factory=list)  # "DecodePng 31.4 ms" …
    # host synchronisations per steady step (analysis/step_time/host_sync.py)
    host_sync_count: float = 0.0
    host_sync_pct: float = 0.0  # host time in syncs, % of the step
    host_sync_idle_pct: Optional[float] = None  # device idle during the syncs, % of the step
    host_sync_calls: List[str] = field(default_factory=list)  # "cudaStreamSynchronize ×12, 3.1 ms" …
    # launch-bound XLA
    median_kernel_us: float = 0.0
    device_idle_pct: float = 0.0  # 100 − the busiest device's busy share of the steady steps
    host_offload_copy_pct: float = 0.0  # of device copy time, to/from host memory (XLA S(5))


@dataclass(frozen=True)
class Recommendation:
    """One piece of advice as the report gives it: what to change, why, what it may save, and the
    events that show it."""

    id: str
    severity: str
    title: str
    message: str
    evidence: str
    snippet: str = ""
    snippet_jax: str = ""
    snippet_label: str = "TF/Keras"  # what `snippet` is written for ("PyTorch" on PyTorch runs)
    expected_gain: Optional[ExpectedGain] = None  # step time the fix can save (advice/gains.py)
    # the trace events that show it, in the file's own coordinates (advice/evidence.py)
    evidence_spans: Tuple[EvidenceSpan, ...] = ()

    def spans_json(self) -> List[Dict[str, Any]]:
        return [span.to_json() for span in self.evidence_spans]

    def gain_json(self) -> Dict[str, Any]:
        if self.expected_gain is None:
            return {"ms_per_step": None, "pct": None, "basis": "no estimate for this finding"}
        return self.expected_gain.to_json()

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "evidence": self.evidence,
            "snippet": self.snippet,
            "snippet_jax": self.snippet_jax,
            "snippet_label": self.snippet_label,
            "expected_gain": self.gain_json(),
            "evidence_spans": self.spans_json(),
        }

    def to_finding_json(self) -> Dict[str, Any]:
        """As a deeper view's finding (docs/deep-views.md): no per-framework snippets, and the snippet
        only where there is one."""
        out = {"id": self.id, "severity": self.severity, "title": self.title, "message": self.message,
               "evidence": self.evidence, "expected_gain": self.gain_json(),
               "evidence_spans": self.spans_json()}
        if self.snippet:
            out["snippet"] = self.snippet
        return out
