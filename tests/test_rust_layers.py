"""The Rust core's layers, as `rust/lib.rs` lists them: each folder uses only those listed
before it; no two modules use each other, however indirectly, in one folder or across
folders; the bindings (`rust/py/`) are conversions in files of at most 300 lines; no Rust
file is over 1,000 lines."""

from __future__ import annotations

import re
from pathlib import Path

from _rust_source import RUST, circles, code_of, module_uses, source_files

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
    """The file's code, without comments and without its `#[cfg(test)]` items (tests may use
    anything)."""
    return code_of(path)


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


def test_the_bindings_are_small_files() -> None:
    long = [
        f"{path.relative_to(RUST)}: {lines} lines"
        for path in sorted(RUST.joinpath("py").rglob("*.rs"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 300
    ]
    assert long == []


def test_no_circle_between_modules() -> None:
    """A module uses another when it names a path into it (`use super::listing::list`,
    `crate::engine::Splitter`, re-exports followed to where the item is defined); a folder's
    `mod.rs` re-exporting its own files' names does not use them. Any circle fails: between
    the files of one folder, between folders, or between a `mod.rs` and its files."""
    found = [" -> ".join(circle) for circle in circles()]
    assert not found, "\n".join(found)


def test_the_module_graph_sees_uses() -> None:
    """The graph above finds the uses it must: through `super::`, `crate::`, a re-export
    of the crate root and of a folder, and a folder naming its own file."""
    uses = module_uses()
    assert "job::read" in uses["job::batch"]  # use super::read::{...}
    assert "text::decode" in uses["job::read"]  # use crate::text::decode::{...}
    assert "engine::plan" in uses["output::sizes"]  # crate::Splitter, re-exported twice
    assert "markdown::outline" in uses["store"]  # crate::markdown::Outline
    assert "py::job::batch" in uses["py::job"]  # batch::register...(module)
    assert "engine::split_tests" not in source_files()  # a test-only file


def test_no_rust_file_is_over_a_thousand_lines() -> None:
    long = [
        f"{path.relative_to(RUST)}: {lines}"
        for path in sorted(RUST.rglob("*.rs"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 1000
    ]
    assert long == []
