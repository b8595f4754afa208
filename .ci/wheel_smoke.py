"""Smoke test of an installed spanchunk (a wheel or an sdist in a fresh virtual environment):
every ```python block of the README and the docs that needs nothing beyond spanchunk's own
dependencies runs, each in a fresh namespace from the repository root, as tests/test_docs.py
runs them. Which blocks run is decided before any runs, from what each block imports: a
block that imports a package that is not installed (an integration's framework, pyarrow,
tokenizers, duckdb) is skipped and named, and so is a block marked
``<!-- not run: ... -->``; any other failure fails the smoke test.

Run from the repository root: python .ci/wheel_smoke.py [PAGE_OR_FOLDER ...]
(default: README.md docs).
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PAGES = ("README.md", "docs")

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
NOT_RUN = re.compile(r"^\s*<!-- not run: (?P<reason>.+?) -->\s*$")

#: The modules that spanchunk's own modules need beyond the standard library: what a bare
#: install of the wheel has.
OWN = frozenset({"spanchunk", "numpy", "tqdm"})
#: What each integration module imports when it is imported.
INTEGRATIONS = {
    "langchain": ("langchain_core", "langchain_text_splitters", "langchain_classic"),
    "llamaindex": ("llama_index",),
    "haystack": ("haystack",),
    "ray": ("ray", "pyarrow"),
}


@dataclass(frozen=True)
class Block:
    """One ```python block of a page."""

    name: str  # page:line of the opening fence, the page relative to the repository root
    text: str
    not_run: str | None  # the reason of a `<!-- not run: ... -->` marker above the fence


def pages(paths: Iterable[str]) -> list[Path]:
    """The Markdown pages named, folders searched for *.md (sorted)."""
    found: list[Path] = []
    for name in paths:
        path = ROOT / name
        found.extend(sorted(path.rglob("*.md")) if path.is_dir() else [path])
    return found


def python_blocks(page: Path) -> list[Block]:
    """The ```python blocks of a page, in order, with the marker above each."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    number = 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if not opening:
            number += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = number + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        if opening["info"] == "python":
            above = next((line for line in reversed(lines[:number]) if line.strip()), "")
            marker = NOT_RUN.match(above)
            body = "\n".join(line[indent:] for line in lines[number + 1 : end]) + "\n"
            name = f"{page.relative_to(ROOT).as_posix()}:{number + 1}"
            blocks.append(Block(name, body, marker["reason"] if marker else None))
        number = end + 1
    return blocks


def is_doctest(block: Block) -> bool:
    return block.text.lstrip().startswith(">>>")


def source(block: Block) -> str:
    """The block's Python source (a doctest's examples joined)."""
    if not is_doctest(block):
        return block.text
    examples = doctest.DocTestParser().get_examples(block.text)
    return "".join(example.source for example in examples)


def needs(block: Block) -> list[str]:
    """The top-level modules the block needs beyond the standard library, in order."""
    modules: list[str] = []
    for node in ast.walk(ast.parse(source(block))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for name in names:
            parts = name.split(".")
            wanted = [parts[0]]
            if parts[:2] == ["spanchunk", "integrations"] and len(parts) > 2:
                wanted += INTEGRATIONS.get(parts[2], ())
            for module in wanted:
                if module not in sys.stdlib_module_names and module not in modules:
                    modules.append(module)
    return modules


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def select(
    blocks: Iterable[Block], available: Callable[[str], bool] = installed
) -> tuple[list[Block], list[tuple[Block, str]]]:
    """The blocks to run, and the blocks skipped with the reason."""
    chosen: list[Block] = []
    skipped: list[tuple[Block, str]] = []
    for block in blocks:
        if block.not_run:
            skipped.append((block, f"not run: {block.not_run}"))
            continue
        missing = [module for module in needs(block) if not available(module)]
        if missing:
            skipped.append((block, "needs " + ", ".join(missing)))
        else:
            chosen.append(block)
    return chosen, skipped


def run(block: Block) -> None:
    """Runs one block in a fresh namespace; raises on failure."""
    namespace: dict[str, object] = {"__name__": "__docs__"}
    if is_doctest(block):
        test = doctest.DocTestParser().get_doctest(block.text, namespace, block.name, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=sys.stdout.write)
        if runner.failures:
            raise AssertionError(f"{runner.failures} failing doctest lines")
    else:
        exec(compile(block.text, block.name, "exec"), namespace)  # running the example


def main(arguments: list[str]) -> int:
    import spanchunk  # noqa: PLC0415 - the install under test, imported when run

    location = Path(spanchunk.__file__).resolve()
    if ROOT / "python" in location.parents:
        print(f"spanchunk imported from the source tree ({location}), not an install")
        return 1
    print(f"spanchunk {spanchunk.__version__} from {location.parent}")
    os.chdir(ROOT)  # the examples run from the repository root, as a reader's would
    blocks = [block for page in pages(arguments or DEFAULT_PAGES) for block in python_blocks(page)]
    chosen, skipped = select(blocks)
    failed = []
    for block in chosen:
        try:
            run(block)
        except Exception:  # every failure is reported, then the run fails
            failed.append(block.name)
            print(f"{block.name}: failed")
            traceback.print_exc()
    ran = len(chosen) - len(failed)
    print(f"{ran} python blocks ran, {len(failed)} failed, {len(skipped)} skipped:")
    for block, reason in skipped:
        print(f"  {block.name}: {reason}")
    return 1 if failed or not chosen else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
