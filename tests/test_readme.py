"""Every ```python example of README.md runs (STYLE.md: every example in the README runs)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[str]:
    return FENCE.findall(README.read_text(encoding="utf-8")) if README.is_file() else []


def test_readme_has_python_examples() -> None:
    assert README.is_file(), "README.md is missing"
    assert python_blocks(), "README.md has no ```python block to test"


def test_every_integration_has_an_example() -> None:
    blocks = python_blocks()
    for module in ("langchain", "llamaindex", "haystack", "ray"):
        assert any(f"spanchunk.integrations.{module} import" in block for block in blocks), module


# Ray Data's DataContext sets its deprecated fields from its own __init__, which warns.
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_readme_examples_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    blocks = python_blocks()
    assert blocks, "README.md has no ```python block to test"
    # The examples run from the repository root, as a reader of the README would.
    monkeypatch.chdir(README.parent)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for number, block in enumerate(blocks, start=1):
        if block.lstrip().startswith(">>>"):
            parser = doctest.DocTestParser()
            test = parser.get_doctest(block, namespace, f"README block {number}", str(README), 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            runner.run(test, clear_globs=False)
            assert runner.failures == 0, f"README block {number} has failing doctest lines"
        else:
            code = compile(block, f"README.md (python block {number})", "exec")
            exec(code, namespace)  # running the documented examples is the test
    capsys.readouterr()
