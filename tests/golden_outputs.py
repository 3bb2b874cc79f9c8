"""Every output the Advisor promises, written for a fixed set of inputs: the saved copy is the contract
that a reorganisation of the package must keep byte for byte.

    python tests/golden_outputs.py write DIR     # write every case into DIR (one file per case)
    python tests/golden_outputs.py check DIR     # compare with DIR; prints the first differences

The inputs are the bundled sample logdir, every profile of the shared corpus (../shared/corpus, when
present), synthetic profiles built in code (tests/synth*.py, deep_profiles.py, pod_synth.py) and runs
of several hosts for the pooled deeper views (tests/captures/h200 read as hosts of one run). The
outputs are what `tb-advisor` prints: report, diff and doctor JSON, and the text, Markdown and HTML
renderings of a subset. It goes through the CLI's `main` only, so it does not care where the
package's modules live.

The process runs as if in a terminal 100 columns wide, and on a host named `golden-runner`: the
report compares a CPU profile's host with the machine it runs on, and the saved outputs must not
depend on which machine wrote them.
"""

from __future__ import annotations

import contextlib
import difflib
import gzip
import io
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Tuple

socket.gethostname = lambda: "golden-runner"  # before the package reads it (see the docstring)
os.environ["COLUMNS"] = "100"  # text output wraps to the terminal: one width wherever this runs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = REPO.parent / "shared" / "corpus"
SAMPLE = REPO / "tb_plugin_advisor" / "sample_logdir"
sys.path.insert(0, str(HERE))

from tb_plugin_advisor.views.cli.main import main as cli_main  # noqa: E402


def _cli(argv: List[str]) -> str:
    """What `tb-advisor ARGV` writes to stdout, and a line with its exit status and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    return out.getvalue() + f"\n--- exit {code}\n{err.getvalue()}"


def _corpus_files(corpus: Path) -> List[Path]:
    if not corpus.is_dir():
        return []
    suffixes = (".xplane.pb", ".json", ".json.gz")
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.name.endswith(suffixes))


def _synthetic_logdir(root: Path) -> Path:
    """Synthetic runs whose truth is known by construction: a GPU run with the deep views, a pod of
    hosts, PyTorch traces of both eras with a slow and a fast DataLoader."""
    import deep_profiles
    import pod_synth
    import synth_kineto

    logdir = root / "synthetic"
    deep_profiles.write_gpu_run(logdir, "gpu_deep")
    pod_synth.write_pod(logdir, "pod", pod_synth.even_pod(4, slow=["worker2"], input_heavy=["worker1"]))
    for era in ("2021", "current"):
        for workers in (0, 4):
            trace = synth_kineto.training_trace(era=era, steps=6, workers=workers)
            trace.write(logdir / f"torch_{era}_w{workers}" / "worker0.1700000001000.pt.trace.json")
    return logdir


def _pooled_logdir(root: Path) -> Path:
    """Runs of several hosts whose deeper views are pooled: the synthetic GPU run (collectives,
    memory, roofline) on two hosts, and the two H200 JAX captures read as the two hosts of one run."""
    import deep_profiles

    logdir = root / "pooled"
    for host in ("gpu-a", "gpu-b"):
        deep_profiles.write_gpu_run(logdir, "gpu_deep_pair", host=host)
    session = logdir / "h200_jax_pair" / "plugins" / "profile" / "2026_11_27_09_23_36"
    session.mkdir(parents=True)
    for capture, host in (("jax_mlp", "fast"), ("jax_mlp_slow_input", "slow")):
        shutil.copyfile(next((HERE / "captures" / "h200" / capture).rglob("*.xplane.pb")),
                        session / f"{host}.xplane.pb")
    return logdir


FIXED_MTIME = 1_700_000_000  # every input file gets it: a checkout's or a copy's times must not matter


def _fix_mtimes(directory: Path) -> None:
    for path in directory.rglob("*"):
        os.utime(path, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)


def cases(root: Path) -> Dict[str, Callable[[], str]]:
    """name -> a function producing that case's output. Inputs are copied under `root` with one
    modification time; paths in outputs are made relative to it."""
    sample = root / "sample"
    shutil.copytree(SAMPLE, sample)
    synthetic = _synthetic_logdir(root)
    pooled = _pooled_logdir(root)
    corpus = root / "corpus"
    if CORPUS.is_dir():
        shutil.copytree(CORPUS, corpus, symlinks=True)
    for directory in (sample, synthetic, pooled, corpus):
        if directory.is_dir():
            _fix_mtimes(directory)
    out: Dict[str, Callable[[], str]] = {}

    def add(name: str, argv: List[str]) -> None:
        out[name] = lambda: _cli(argv)

    sample_runs = ["run1_naive", "run2_parallel", "run3_mixed", "run4_custom_loop"]
    for run in sample_runs:
        for fmt in ("json", "text", "md", "html"):
            add(f"sample/report.{run}.{fmt}", ["report", str(sample), "--run", run, "--format", fmt,
                                               "--workers", "1"])
    for base, cand in (("run1_naive", "run2_parallel"), ("run2_parallel", "run3_mixed"),
                       ("run1_naive", "run4_custom_loop")):
        for fmt in ("json", "text", "md", "html"):
            add(f"sample/diff.{base}.{cand}.{fmt}", ["diff", str(sample), base, cand, "--format", fmt,
                                                      "--workers", "1"])
    add("sample/doctor.json", ["doctor", str(sample), "--json"])
    add("sample/doctor.text", ["doctor", str(sample)])

    synthetic_runs = ["gpu_deep", "pod", "torch_2021_w0", "torch_2021_w4", "torch_current_w0",
                      "torch_current_w4"]
    for run in synthetic_runs:
        for fmt in ("json", "text", "md", "html"):
            add(f"synthetic/report.{run}.{fmt}", ["report", str(synthetic), "--run", run, "--format", fmt,
                                                  "--workers", "1"])
        for fmt in ("text", "md", "json"):
            add(f"synthetic/sections.{run}.{fmt}",
                ["report", str(synthetic), "--run", run, "--format", fmt, "--workers", "1",
                 "--section", "kernels", "--section", "memory", "--section", "collectives",
                 "--section", "roofline", "--section", "validity"])
    for base, cand in (("torch_current_w0", "torch_current_w4"), ("torch_2021_w0", "torch_current_w4"),
                       ("gpu_deep", "pod")):
        for fmt in ("json", "text", "md", "html"):
            add(f"synthetic/diff.{base}.{cand}.{fmt}", ["diff", str(synthetic), base, cand, "--format", fmt,
                                                         "--workers", "1"])
    add("synthetic/doctor.json", ["doctor", str(synthetic), "--json"])

    for run in ("gpu_deep_pair", "h200_jax_pair"):
        add(f"pooled/report.{run}.json", ["report", str(pooled), "--run", run, "--format", "json",
                                          "--workers", "1"])
        add(f"pooled/sections.{run}.text",
            ["report", str(pooled), "--run", run, "--workers", "1", "--section", "kernels", "--section",
             "memory", "--section", "collectives", "--section", "roofline"])

    for path in _corpus_files(corpus):
        rel = str(path.relative_to(corpus))
        add(f"corpus/report.{rel}.json", ["report", str(path), "--format", "json", "--workers", "1"])
        add(f"corpus/report.{rel}.md", ["report", str(path), "--format", "md", "--workers", "1"])
    pairs: List[Tuple[str, str]] = [
        ("kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
         "kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"),
        ("kineto/docs/traces/before_fix_trace.json", "kineto/docs/traces/after_fix_trace.json"),
        ("hta/tests/data/trace_compare/base/base.json.gz", "hta/tests/data/trace_compare/test/test.json.gz"),
    ]
    for base, cand in pairs:
        if (corpus / base).is_file() and (corpus / cand).is_file():
            for fmt in ("json", "text"):
                add(f"corpus/diff.{Path(base).name}.{Path(cand).name}.{fmt}",
                    ["diff", str(corpus / base), str(corpus / cand), "--format", fmt, "--workers", "1"])
    if corpus.is_dir():
        # (the files only: reading every corpus profile again would double this check; the corpus
        # reports above hold their validity)
        add("corpus/doctor.json", ["doctor", str(corpus), "--json", "--no-validity"])
    return out


BUNDLE = REPO / "tb_plugin_advisor" / "static" / "index.js"


def _normalise(text: str, root: Path, bundle: str) -> str:
    """Paths made relative; the tab's bundle, which HTML exports embed, named instead of copied (the
    frontend's build is checked by its own tests, not by these outputs)."""
    if bundle:
        text = text.replace(bundle, "<the tab's bundle, static/index.js>")
    for prefix, name in ((str(root), "<tmp>"), (str(REPO), "<repo>")):
        text = text.replace(prefix, name)
    return text


def embedded_bundle(source: str) -> str:
    """The bundle as an HTML export embeds it (inside a <script> element)."""
    return source.replace("</script", "<\\/script")


def _file_name(case: str) -> str:
    return case.replace("/", "__") + ".gz"


def produce() -> Dict[str, str]:
    root = Path(tempfile.mkdtemp(prefix="tb-advisor-golden-"))
    try:
        bundle = embedded_bundle(BUNDLE.read_text(encoding="utf-8"))
        return {name: _normalise(make(), root, bundle) for name, make in cases(root).items()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.gz"):
        old.unlink()
    for name, text in produce().items():
        with open(directory / _file_name(name), "wb") as raw, \
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as handle:
            handle.write(text.encode("utf-8"))


def check(directory: Path) -> List[str]:
    """The differences, one entry per case that differs (with the first lines of its diff)."""
    produced = produce()
    problems = []
    saved_names = {p.name for p in directory.glob("*.gz")}
    for name, text in produced.items():
        file_name = _file_name(name)
        if file_name not in saved_names:
            problems.append(f"{name}: no saved output")
            continue
        saved_names.discard(file_name)
        saved = gzip.decompress((directory / file_name).read_bytes()).decode("utf-8")
        if saved != text:
            lines = list(difflib.unified_diff(saved.splitlines(), text.splitlines(), "saved", "now",
                                              lineterm="", n=1))
            problems.append(f"{name}:\n" + "\n".join(lines[:40]))
    if not CORPUS.is_dir():  # the shared corpus is absent here: its cases cannot be made
        saved_names = {n for n in saved_names if not n.startswith("corpus__")}
    problems.extend(f"{name}: saved, but no longer produced" for name in sorted(saved_names))
    return problems


if __name__ == "__main__":
    os.environ.setdefault("TB_ADVISOR_NO_PROGRESS", "1")
    command, target = sys.argv[1], Path(sys.argv[2])
    if command == "write":
        write(target)
    else:
        found = check(target)
        print("\n\n".join(found) if found else "identical")
        sys.exit(1 if found else 0)
