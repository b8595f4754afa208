"""Every ```python example of the "Keeping parents" section runs, in order, in one namespace
(STYLE.md: every example in the README runs). The section is kept in its own file until it
moves into README.md, where test_readme.py runs it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SECTION = Path(__file__).resolve().parent.parent / "docs-keeping-parents.md"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[str]:
    return FENCE.findall(SECTION.read_text(encoding="utf-8")) if SECTION.is_file() else []


def test_section_has_python_examples() -> None:
    assert SECTION.is_file(), f"{SECTION.name} is missing"
    assert len(python_blocks()) >= 4


def test_section_examples_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(SECTION.parent)
    namespace: dict[str, object] = {"__name__": "__keeping_parents__"}
    for number, block in enumerate(python_blocks(), start=1):
        code = compile(block, f"{SECTION.name} (python block {number})", "exec")
        exec(code, namespace)  # running the documented examples is the test
    printed = capsys.readouterr().out
    assert "fingerprint" in printed  # the refused add printed its error
