"""Smoke test of an installed spanchunk (a wheel or an sdist in a fresh virtual environment):
every ```python block of README.md that needs nothing beyond spanchunk's own dependencies
runs, in order, in one namespace, as test_readme.py runs them. Blocks that import an
optional package that is not installed (an integration, pyarrow, tiktoken) are skipped and
named. Run from the repository root: python .ci/wheel_smoke.py README.md"""

from __future__ import annotations

import doctest
import importlib.util
import re
import sys
from pathlib import Path

import spanchunk

FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
OWN = {"spanchunk", "numpy", "tqdm"}


def main() -> int:
    here = Path(__file__).resolve().parent.parent
    installed = Path(spanchunk.__file__).resolve()
    if here / "python" in installed.parents:
        print(f"spanchunk imported from the source tree ({installed}), not an install")
        return 1
    print(f"spanchunk {spanchunk.__version__} from {installed.parent}")
    blocks = FENCE.findall(Path(sys.argv[1]).read_text(encoding="utf-8"))
    namespace: dict[str, object] = {"__name__": "__readme__"}
    ran, skipped = 0, []
    for number, block in enumerate(blocks, start=1):
        try:
            if block.lstrip().startswith(">>>"):
                test = doctest.DocTestParser().get_doctest(
                    block, namespace, f"README block {number}", "README.md", 0
                )
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
                runner.run(test, clear_globs=False, out=lambda _text: None)
                if runner.failures:
                    # A doctest's import failure shows up as a failure: rerun to see why.
                    missing = _missing_module(block)
                    if missing:
                        skipped.append((number, missing))
                        continue
                    print(f"README block {number}: {runner.failures} failing doctest lines")
                    return 1
            else:
                exec(compile(block, f"README.md (python block {number})", "exec"), namespace)
        except ModuleNotFoundError as error:
            if error.name and error.name.split(".")[0] not in OWN:
                skipped.append((number, error.name))
                continue
            raise
        ran += 1
    print(f"README: {ran} python blocks ran, {len(skipped)} skipped for optional packages:")
    for number, module in skipped:
        print(f"  block {number}: needs {module}")
    return 0 if ran else 1


def _missing_module(block: str) -> str | None:
    """The first optional module a block imports that is not installed, if any."""
    for name in re.findall(r"^\W*(?:from|import)\s+([\w.]+)", block, re.MULTILINE):
        top = name.split(".")[0]
        if top not in OWN and importlib.util.find_spec(top) is None:
            return top
    return None


if __name__ == "__main__":
    sys.exit(main())
