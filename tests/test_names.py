"""One name, one thing: no two Rust types or functions of the core share a name (a top-level
`struct`, `enum`, `union`, `trait`, `type` or free `fn` that is not test-only, anywhere under
`rust/`; methods are not counted), and no two Python classes or module-level functions of
the package share one (private names included, the extension's stub `_core.pyi` too;
methods and nested functions are not counted)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from _rust_source import RUST, top_level_items

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "spanchunk"

# Duplicates in cli/, stores/ and batch.py, the parts being moved into spanchunk.ingest:
# each name with the files that define it, exactly (a name no longer defined twice leaves
# the list). The move removed the three there were (StoreBatch, file_document_id and
# is_binary, each beside the extension's own); a new one goes here only while it moves.
ALLOWED_PYTHON: dict[str, set[str]] = {}


def python_definitions(path: Path) -> set[str]:
    """The classes and functions a module defines at its top level (in `if`, `try` and `with`
    blocks too: a definition for one case counts once), less a module's own protocol hooks
    (`__getattr__`, `__dir__`: every module that has one spells it so)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                if not (node.name.startswith("__") and node.name.endswith("__")):
                    names.add(node.name)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return names


def python_names() -> dict[str, set[str]]:
    """Each class or function name of the package, with the files that define it."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi")]):
        for name in python_definitions(path):
            found[name].add(path.relative_to(PACKAGE).as_posix())
    return found


def rust_names() -> dict[str, set[str]]:
    """Each top-level item name of the core, with where it is (`kind file:line`)."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for name, kind, path, line in top_level_items():
        found[name].add(f"{kind} {path.relative_to(RUST).as_posix()}:{line}")
    return found


def test_no_two_rust_items_share_a_name() -> None:
    shared = {name: sorted(places) for name, places in rust_names().items() if len(places) > 1}
    assert not shared, "\n".join(f"{name}: {', '.join(places)}" for name, places in shared.items())


def test_no_two_python_definitions_share_a_name() -> None:
    shared = {name: files for name, files in python_names().items() if len(files) > 1}
    unexpected = {
        name: sorted(files) for name, files in shared.items() if ALLOWED_PYTHON.get(name) != files
    }
    assert not unexpected, "\n".join(
        f"{name}: {', '.join(files)}" for name, files in unexpected.items()
    )
    gone = sorted(set(ALLOWED_PYTHON) - set(shared))
    assert not gone, f"no longer defined twice, so to leave ALLOWED_PYTHON: {gone}"


def test_the_scans_see_the_definitions() -> None:
    rust = rust_names()
    assert [place.split(":")[0] for place in rust["Splitter"]] == ["struct engine/plan.rs"]
    assert [place.split(":")[0] for place in rust["tree_spans"]] == ["fn engine/tree.rs"]
    assert "tests" not in rust and "corpus_texts" not in rust  # test-only
    python = python_names()
    assert python["Chunker"] == {"chunkers/base.py"}
    assert python["Splitter"] == {"_core.pyi"}
    assert "split_text" not in python  # a method
