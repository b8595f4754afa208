"""The real corpus (every file of every folder) through the whole contract: the vendored texts
(``tests/corpus``), or the whole shared corpus where ``SPANCHUNK_CORPUS`` names it.

Each folder is one test per chunker configuration and unit, so a failure names the folder,
the settings and (in the assertion message) the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from _contract import (
    TextInfo,
    check_chunker,
    hierarchical_levels,
    parent_child_levels,
)
from conftest import VENDORED_CORPUS
from spanchunk import HierarchicalChunker, ParentChildChunker

FOLDERS = ["gutenberg", "markdown-en", "markdown-zh"]
UNITS = ["char", "byte"]

CONFIGS: dict[str, tuple[Callable[[str], Any], Callable[[], dict]]] = {
    "parent-child-2000-400": (
        lambda unit: ParentChildChunker(2000, 400, child_overlap=0, unit=unit),
        lambda: parent_child_levels(2000, 400, 0),
    ),
    "parent-child-2000-400-overlap-100": (
        lambda unit: ParentChildChunker(2000, 400, child_overlap=100, unit=unit),
        lambda: parent_child_levels(2000, 400, 100),
    ),
    "hierarchical-2048-512-128": (
        lambda unit: HierarchicalChunker([2048, 512, 128], unit=unit),
        lambda: hierarchical_levels([2048, 512, 128], 0),
    ),
}


def _check_files(
    files: list[tuple[str, str]], make: Callable[[], Any], spec: dict, unit: str
) -> None:
    for name, text in files:
        chunker = make()
        try:
            tree = check_chunker(chunker, text, spec, unit, info=TextInfo(text))
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error
        assert tree, f"{name}: no chunks"


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("folder", FOLDERS)
def test_corpus_folder_keeps_the_contract(
    corpus: dict[str, list[tuple[str, str]]], folder: str, config: str, unit: str
) -> None:
    assert folder in corpus, f"corpus folder {folder} is missing"
    make, spec = CONFIGS[config]
    _check_files(corpus[folder], lambda: make(unit), spec(), unit)


def test_every_corpus_folder_is_covered(corpus: dict[str, list[tuple[str, str]]]) -> None:
    assert sorted(corpus) == sorted(FOLDERS), "a corpus folder is not in the tests"
    # Several documents in every folder, from a few hundred characters to tens of thousands.
    assert all(len(files) >= 4 for files in corpus.values())
    sizes = [len(text) for files in corpus.values() for _, text in files]
    assert min(sizes) < 500 and max(sizes) > 50_000


def test_every_vendored_file_is_named_in_the_readme() -> None:
    # The README names each vendored file with its origin and licence: a file added without
    # its line there (or a line left for a file taken out) fails here.
    readme = (VENDORED_CORPUS.parent / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `([^`]+)` \|", readme, flags=re.MULTILINE))
    files = {
        str(path.relative_to(VENDORED_CORPUS.parent))
        for path in VENDORED_CORPUS.parent.rglob("*")
        if path.is_file() and path.name != "README.md"
    }
    assert named == files


def _all_files(corpus: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    return [file for folder in FOLDERS for file in corpus[folder]]


@pytest.mark.parametrize("unit", UNITS)
def test_tiny_sizes_on_the_whole_corpus(
    corpus: dict[str, list[tuple[str, str]]], unit: str
) -> None:
    # Child 10 cuts almost every word: the grapheme and code point fallbacks on real text.
    _check_files(
        _all_files(corpus),
        lambda: ParentChildChunker(40, 10, child_overlap=0, unit=unit),
        parent_child_levels(40, 10, 0),
        unit,
    )


def test_tiny_sizes_with_overlap_on_the_whole_corpus(
    corpus: dict[str, list[tuple[str, str]]],
) -> None:
    _check_files(
        _all_files(corpus),
        lambda: ParentChildChunker(40, 10, child_overlap=5, unit="char"),
        parent_child_levels(40, 10, 5),
        "char",
    )


def test_corpus_bom_is_trimmed_and_counted_in_offsets(
    corpus: dict[str, list[tuple[str, str]]],
) -> None:
    # The books start with a byte order mark: invisible, so blank, trimmed off the first
    # chunk; the offsets still count it (1 char, 3 bytes).
    name, text = corpus["gutenberg"][0]
    assert text.startswith("\ufeff"), name
    first = ParentChildChunker(2000, 400, child_overlap=0).chunk(text)[0]
    assert (first.start_char, first.start_byte) == (1, 3)
    assert not first.text.startswith("\ufeff")
    assert first.end_byte == 3 + len(first.text.encode())
