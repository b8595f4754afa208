"""Atheris target: the Python API over arbitrary text and settings, checked against the
contract by the tests' own checker (tests/_contract.py: exact spans, sizes, no blank chunk,
order, coverage, overlap, hierarchy, and chunk_tree / chunk / spans agreeing).

    python fuzz/python_api.py -max_total_time=120 fuzz/corpus/python_api

A size setting the API refuses (ValueError) is skipped; any other exception is a finding.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

with atheris.instrument_imports():
    from _contract import (
        check_chunker,
        hierarchical_levels,
        parent_child_levels,
        recursive_levels,
    )
    from spanchunk import HierarchicalChunker, ParentChildChunker, RecursiveChunker

KEEP = ("end", "start", False)


def one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    kind = provider.ConsumeIntInRange(0, 2)
    unit = ("char", "byte")[provider.ConsumeIntInRange(0, 1)]
    size = provider.ConsumeIntInRange(4, 300)
    overlap = provider.ConsumeIntInRange(0, size - 1) if provider.ConsumeBool() else 0
    keep = KEEP[provider.ConsumeIntInRange(0, 2)]
    trim = provider.ConsumeBool()
    text = provider.ConsumeUnicodeNoSurrogates(provider.remaining_bytes())
    try:
        if kind == 0:
            chunker = RecursiveChunker(
                chunk_size=size, overlap=overlap, keep_separator=keep, trim=trim, unit=unit
            )
            spec = recursive_levels(size, overlap)
        elif kind == 1:
            child = max(4, size // 3)
            if child >= size:
                return
            chunker = ParentChildChunker(
                size, child, child_overlap=min(overlap, child - 1), unit=unit
            )
            spec = parent_child_levels(size, child, min(overlap, child - 1))
        else:
            sizes = [size, max(4, size // 2), 4]
            if not sizes[0] > sizes[1] > sizes[2]:
                return
            chunker = HierarchicalChunker(sizes, overlap=min(overlap, 3), unit=unit)
            spec = hierarchical_levels(sizes, min(overlap, 3))
    except ValueError:
        return
    check_chunker(chunker, text, spec, unit)


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
