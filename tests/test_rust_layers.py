"""The Rust core's layers, as `rust/lib.rs` lists them: each folder uses only those listed
before it; the bindings (`rust/py/`) are conversions in files of at most 300 lines, with no
circle between them; no Rust file is over 1,000 lines."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

RUST = Path(__file__).resolve().parent.parent / "rust"

# The core's top-level files any folder may use (the error type, the ids).
SHARED = {"error", "ids"}


def reexports() -> dict[str, str]:
    """What `lib.rs` re-exports (`pub use engine::{Splitter, ...};`), by the folder or file it
    comes from: `crate::Splitter` is a use of `engine`."""
    doc = RUST.joinpath("lib.rs").read_text(encoding="utf-8")
    found = {}
    for origin, names in re.findall(r"^pub use (\w+)::\{?([\w, ]+)\}?;", doc, flags=re.M):
        for name in names.split(","):
            found[name.strip()] = origin
    return found


def listed_folders() -> list[str]:
    """The folders in the order `rust/lib.rs`'s opening comment lists them."""
    doc = RUST.joinpath("lib.rs").read_text(encoding="utf-8")
    return re.findall(r"^//! - `([a-z]+)/`", doc, flags=re.M)


def non_test_source(path: Path) -> str:
    """The file's code, without its `#[cfg(test)]` module (tests may use anything)."""
    return path.read_text(encoding="utf-8").split("#[cfg(test)]")[0]


def crate_uses(source: str) -> set[str]:
    """The core folders and files a source names through `crate::`."""
    names = reexports()
    return {names.get(name, name) for name in re.findall(r"crate::([A-Za-z_]+)", source)}


def test_lib_lists_every_folder() -> None:
    assert reexports()["Splitter"] == "engine" and reexports()["ChunkError"] == "error"
    folders = listed_folders()
    on_disk = sorted(path.name for path in RUST.iterdir() if path.is_dir())
    assert sorted(folders) == on_disk
    assert folders[-1] == "py"


def test_each_folder_uses_only_the_folders_listed_before_it() -> None:
    folders = listed_folders()
    wrong = []
    for rank, folder in enumerate(folders):
        allowed = set(folders[:rank]) | SHARED | {folder}
        for path in sorted(RUST.joinpath(folder).rglob("*.rs")):
            for used in crate_uses(non_test_source(path)) - allowed:
                wrong.append(f"{path.relative_to(RUST)} uses crate::{used}")
    assert wrong == []


def py_module(path: Path) -> str:
    """`rust/py/job/batch.rs` -> `job::batch`; a `mod.rs` is its folder."""
    parts = list(path.relative_to(RUST / "py").with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


def test_the_bindings_are_small_files_without_a_circle() -> None:
    files = sorted(RUST.joinpath("py").rglob("*.rs"))
    modules = {py_module(path): path for path in files}
    long = [
        f"{path.relative_to(RUST)}: {lines} lines"
        for path in files
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 300
    ]
    assert long == []
    uses: defaultdict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        source = non_test_source(path)
        parent = module.rsplit("::", 1)[0] if "::" in module else ""
        for name in re.findall(r"crate::py::([a-z_:]+)", source):
            uses[module].add(longest_module(name, modules))
        for name in re.findall(r"\buse super::([a-z_]+)", source):
            uses[module].add(longest_module(f"{parent}::{name}" if parent else name, modules))
        uses[module].discard(module)
        uses[module].discard("")
    circles = [
        f"{module} -> {other} -> {module}"
        for module in modules
        for other in uses[module]
        if reaches(other, module, uses)
    ]
    assert circles == []


def longest_module(name: str, modules: dict[str, Path]) -> str:
    """The longest module path that `name` (`job::batch::run`) starts with."""
    parts = name.strip(":").split("::")
    for end in range(len(parts), 0, -1):
        candidate = "::".join(parts[:end])
        if candidate in modules:
            return candidate
    return ""


def reaches(start: str, goal: str, uses: dict[str, set[str]]) -> bool:
    """Whether `start` uses `goal`, directly or through other modules."""
    seen, pending = set(), [start]
    while pending:
        module = pending.pop()
        if module == goal:
            return True
        if module not in seen:
            seen.add(module)
            pending.extend(uses.get(module, ()))
    return False


def test_no_rust_file_is_over_a_thousand_lines() -> None:
    long = [
        f"{path.relative_to(RUST)}: {lines}"
        for path in sorted(RUST.rglob("*.rs"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 1000
    ]
    assert long == []
