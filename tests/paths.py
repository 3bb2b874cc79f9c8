"""Where the suite's inputs live, named once: the repository, the committed captures, the saved golden
outputs, the bundled sample and the shared real-world corpus beside the repository.

The corpus is not part of the repository (it holds other people's profiles): a clone without
`../shared` beside it skips the tests that read it, saying so, instead of failing them."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CAPTURES = TESTS / "captures"
H200 = CAPTURES / "h200"
GOLDEN = TESTS / "golden"
SAMPLE_LOGDIR = ROOT / "tb_plugin_advisor" / "sample_logdir"
CORPUS = ROOT.parent / "shared" / "corpus"

NO_CORPUS = f"the shared corpus is not beside this checkout ({CORPUS})"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)


def corpus_file(relative: str) -> Path:
    """A corpus file by its path inside the corpus; the calling test is skipped when it is absent."""
    path = CORPUS / relative
    if not path.exists():
        pytest.skip(f"{relative} is not in the shared corpus ({CORPUS})")
    return path
