"""How often the recommendations' predicted gains held: every baseline → candidate pair at hand,
predicted interval against realized step-time gain, per rule.

    python bench/calibrate_gains.py [--tf-profiles DIR] [--torch-traces DIR]

Pairs: the bundled sample's Keras runs, the committed H200 captures (DataLoader workers, bf16,
torch.compile, channels_last, transformer bf16, and unchanged repeats that must not be judged),
the corpus ResNet-50 num_workers 0 → 4 captures (when ../shared/corpus is there), and, given their
cache folders (TB_ADVISOR_TF_PROFILES_CACHE / TB_ADVISOR_TORCH_TRACES_CACHE from a test session),
the real TF custom loop and PyTorch DataLoader pairs the tests capture. Prints one row per
recommendation acted on: rule, pair, predicted ms per step, realized, the verdict with the
diff's noise allowance, and how often each rule's interval held. Not a test: the tests assert the
pairs that must hold (tests/advice/test_gains.py); this shows the whole picture to tune the intervals.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tb_plugin_advisor.diff.compare import diff_reports  # noqa: E402
from tb_plugin_advisor.formatting import format_number  # noqa: E402
from tb_plugin_advisor.model import RunProfiles  # noqa: E402
from tb_plugin_advisor.readers.formats.registry import is_analysed  # noqa: E402
from tb_plugin_advisor.report.hostpool import build_session_report  # noqa: E402
from tb_plugin_advisor.sources.discovery import scan_logdir  # noqa: E402

H200_PAIRS = [
    ("resnet50_fp32_workers0", "resnet50_fp32_workers8"),
    ("resnet50_fp32_workers8", "resnet50_bf16_workers8"),
    ("resnet50_bf16_workers8", "resnet50_bf16_channels_last_workers8"),
    ("transformer_fp32", "transformer_bf16"),
    ("mlp_launch_bound", "mlp_launch_bound_compiled"),
    ("resnet50_fp32_workers8", "resnet50_fp32_workers8_repeat1"),
    ("resnet50_fp32_workers8_repeat1", "resnet50_fp32_workers8_repeat2"),
]
SAMPLE_PAIRS = [("run1_naive", "run2_parallel"), ("run2_parallel", "run3_mixed")]
CORPUS_PAIRS = [("resnet50_num_workers_0", "resnet50_num_workers_4")]


def _reports(logdir: Path) -> Dict[str, Dict]:
    """The report of every run of a logdir, by the run's first path component."""
    out: Dict[str, Dict] = {}
    for session in scan_logdir(str(logdir)).sessions:
        if not is_analysed(session.format):
            continue
        report = build_session_report(session, None)
        key = session.run.split("/")[0]
        out.setdefault(key, report.to_json() if hasattr(report, "to_json") else report)
    return out


def _pairs(args: argparse.Namespace) -> Iterator[Tuple[str, Dict, Dict]]:
    h200 = _reports(ROOT / "tests" / "captures" / "h200")
    for a, b in H200_PAIRS:
        yield f"h200 {a} → {b}", h200[a], h200[b]
    sample = _reports(ROOT / "tb_plugin_advisor" / "sample_logdir")
    for a, b in SAMPLE_PAIRS:
        yield f"sample {a} → {b}", sample[a], sample[b]
    corpus = ROOT.parent / "shared" / "corpus" / "kineto" / "tb_plugin" / "samples"
    if corpus.is_dir():
        for a, b in CORPUS_PAIRS:
            for x in sorted((corpus / a).glob("*.pt.trace.json*")):
                for y in sorted((corpus / b).glob("*.pt.trace.json*")):
                    yield (f"corpus {a}/{x.name[8:21]} → {b}/{y.name[8:21]}",
                           _file_report(x), _file_report(y))
    for folder, pairs in ((args.tf_profiles, [("loop_input_bound", "loop_fixed")]),
                          (args.torch_traces, [("slow_loader", "fast_loader")])):
        if folder:
            logdirs = sorted(Path(folder).glob("**/logdir"))
            if logdirs:
                found = _reports(logdirs[-1])
                for a, b in pairs:
                    if a in found and b in found:
                        yield f"session {a} → {b}", found[a], found[b]


def _file_report(path: Path) -> Dict:
    from tb_plugin_advisor.readers.kineto.reader import read_kineto
    from tb_plugin_advisor.report.run import build_report

    return build_report(RunProfiles(run=path.name, profiles=[read_kineto(str(path))])).to_json()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tf-profiles", default=None, help="a TB_ADVISOR_TF_PROFILES_CACHE folder")
    parser.add_argument("--torch-traces", default=None, help="a TB_ADVISOR_TORCH_TRACES_CACHE folder")
    args = parser.parse_args(argv)
    held: Dict[str, List[str]] = defaultdict(list)
    print("| pair | rule | predicted ms/step | realized | verdict |")
    print("|---|---|---:|---:|---|")
    for label, before, after in _pairs(args):
        diff = diff_reports(before, after)
        judged = [o for o in diff["recommendation_outcomes"] if o["acted_on"]]
        if not judged:
            realized = diff["step_time"]["baseline_ms"] - diff["step_time"]["candidate_ms"]
            print(f"| {label} | (no fix acted on) | | {format_number(realized)} | |")
        for o in judged:
            predicted = o["predicted_ms_per_step"]
            shown = f"{format_number(predicted[0])}–{format_number(predicted[1])}" if predicted else "none"
            print(f"| {label} | {o['id']} | {shown} | {format_number(o['realized_ms_per_step'])} | "
                  f"{o['verdict'] or '—'} |")
            if o["verdict"]:
                held[o["id"]].append(o["verdict"])
    print()
    for rule, verdicts in sorted(held.items()):
        within = verdicts.count("within")
        print(f"{rule}: {within} of {len(verdicts)} within "
              f"({verdicts.count('below')} below, {verdicts.count('above')} above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
