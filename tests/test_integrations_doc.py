"""Every ```python example of the integrations documentation runs, each in a fresh namespace.

Blocks fenced ```py (the cluster recipe, Spark) need a cluster or a JVM and are not run here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs-integrations.md"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[str]:
    return FENCE.findall(DOC.read_text(encoding="utf-8")) if DOC.is_file() else []


def test_every_integration_has_an_example() -> None:
    blocks = python_blocks()
    for module in ("langchain", "llamaindex", "haystack", "ray"):
        assert any(f"spanchunk.integrations.{module} import" in block for block in blocks), module


# Ray Data's DataContext sets its deprecated fields from its own __init__, which warns.
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
@pytest.mark.parametrize("number", range(len(python_blocks())))
def test_example_runs(
    number: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    block = python_blocks()[number]
    monkeypatch.chdir(DOC.parent)
    code = compile(block, f"{DOC.name} (python block {number + 1})", "exec")
    exec(code, {"__name__": "__docs__"})  # running the documented example is the test
    capsys.readouterr()
