"""Every dataclass of the package says what it is in a docstring. Besides being read, that keeps the
CLI's imports short: a dataclass without one has a docstring generated at import by inspect.signature
(~0.3 ms a class, and the tokenizer's patterns compiled for the first; 24 of them in a report's
imports). Read from the sources (no import: some modules need optional extras)."""

from __future__ import annotations

import ast
from pathlib import Path

import tb_plugin_advisor

PACKAGE = Path(tb_plugin_advisor.__file__).parent


def _is_dataclass_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "dataclass") or (
        isinstance(target, ast.Attribute) and target.attr == "dataclass")


def dataclasses_without_docstring(root: Path):
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ClassDef) and any(map(_is_dataclass_decorator, node.decorator_list))
                    and not (ast.get_docstring(node) or "").strip()):
                yield f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"


def test_every_dataclass_has_a_docstring_of_its_own():
    assert list(dataclasses_without_docstring(PACKAGE)) == []


def test_the_check_finds_a_dataclass_without_one(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text(
        "import dataclasses\nfrom dataclasses import dataclass\n\n"
        "@dataclass\nclass Bare:\n    x: int\n\n"
        "@dataclasses.dataclass(frozen=True)\nclass AlsoBare:\n    x: int\n\n"
        "@dataclass\nclass Said:\n    \"\"\"What it is.\"\"\"\n\n    x: int\n\n"
        "class Plain:\n    x: int\n")
    assert list(dataclasses_without_docstring(package)) == ["pkg/m.py:5 Bare", "pkg/m.py:9 AlsoBare"]
