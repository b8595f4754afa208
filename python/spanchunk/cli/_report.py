"""What a run tells its user on stderr: skipped files, a progress bar, and the summary."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from spanchunk.cli._job import BatchResult

# Skipped files of these kinds are counted, and listed only with --verbose: a source tree can
# hold thousands of binaries, and a line for each buried the messages that matter.
QUIET_KINDS = frozenset({"binary"})

# The progress bar is drawn for runs that take a while, on a terminal only.
PROGRESS_MIN_BYTES = 20_000_000
PROGRESS_MIN_FILES = 50


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


@dataclass
class Totals:
    """What a run did, for the summary."""

    documents: int = 0
    parents: int = 0
    children: int = 0
    bytes_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    levels: list[NDArray[np.int64]] = field(default_factory=list)
    sizes: list[NDArray[np.int64]] = field(default_factory=list)
    #: Into a SQLite store: what became of each document.
    store: bool = False
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    pruned: int = 0
    #: Documents whose files are gone, kept because the run had no --prune.
    gone: int = 0

    def add_batch(self, result: BatchResult) -> None:
        """Count what one batch did (its skipped files are counted as they are reported)."""
        self.documents += result.documents
        self.bytes_read += result.bytes_read
        self.added += result.added
        self.replaced += result.replaced
        self.unchanged += result.unchanged
        for levels, sizes in zip(result.levels, result.sizes, strict=True):
            self.add_chunks(levels, sizes)

    def add_chunks(self, levels: NDArray[np.int64], sizes: NDArray[np.int64]) -> None:
        """Count one batch's chunks (the level and char length of each)."""
        if len(levels):
            leaves = int((levels == 0).sum())
            self.children += leaves
            self.parents += len(levels) - leaves
            self.levels.append(levels)
            self.sizes.append(sizes)


class Reporter:
    """Messages about skipped files, and a tqdm progress bar on a terminal."""

    def __init__(self, stream: TextIO, *, verbose: bool, totals: Totals) -> None:
        self.stream = stream
        self.verbose = verbose
        self.totals = totals
        self._bar: Any = None

    def skip(self, path: str, kind: str, message: str) -> None:
        """Count a skipped path; say so unless it is a quiet kind (and not --verbose)."""
        self.totals.skipped[kind] += 1
        if self.verbose or kind not in QUIET_KINDS:
            self.say(f"spanchunk: skipped {path}: {message}")

    def say(self, message: str) -> None:
        """Print a line without garbling the progress bar."""
        if self._bar is not None:
            self._bar.write(message, file=self.stream)
        else:
            print(message, file=self.stream, flush=True)

    def start(self, files: int, total_bytes: int) -> None:
        """Draw a progress bar when stderr is a terminal and the run is not tiny."""
        if not _isatty(self.stream) or (
            files < PROGRESS_MIN_FILES and total_bytes < PROGRESS_MIN_BYTES
        ):
            return
        from tqdm import tqdm  # noqa: PLC0415  (only on a terminal: the import costs 30 ms)

        self._bar = tqdm(
            total=total_bytes,
            unit="B",
            unit_scale=True,
            unit_divisor=1000,
            file=self.stream,
            desc="spanchunk",
            dynamic_ncols=True,
            leave=False,
            postfix=f"0/{files} files",
        )
        self._files = files
        self._done = 0

    def advance(self, files: int, size: int) -> None:
        """Move the bar on by a batch of ``files`` files of ``size`` bytes."""
        if self._bar is not None:
            self._done += files
            self._bar.set_postfix_str(f"{self._done}/{self._files} files", refresh=False)
            self._bar.update(size)

    def close(self) -> None:
        """Erase the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _percentiles(sizes: NDArray[np.int64]) -> str:
    # Nearest-rank percentiles of the sorted sizes (np.percentile cost a quarter second on
    # a small run, most of it its first call).
    ordered = sorted(sizes.tolist())
    last = len(ordered) - 1
    p50, p90, p99 = (ordered[round(last * share)] for share in (0.5, 0.9, 0.99))
    return f"p50 {p50}, p90 {p90}, p99 {p99}, max {ordered[-1]}"


def summary(totals: Totals, elapsed: float) -> str:
    """The summary lines: counts, skipped by reason, chunk sizes per level, MB/s."""
    megabytes = totals.bytes_read / 1e6
    rate = megabytes / elapsed if elapsed > 0 else 0.0
    lines = [
        f"spanchunk: {totals.documents} documents, {totals.parents} parents, "
        f"{totals.children} children, {megabytes:.1f} MB in {elapsed:.2f} s ({rate:.1f} MB/s)"
    ]
    if totals.skipped:
        reasons = ", ".join(f"{count} {kind}" for kind, count in sorted(totals.skipped.items()))
        lines[0] += f", {totals.skipped.total()} skipped ({reasons})"
    if totals.store:
        line = (
            f"spanchunk:   store: {totals.added} added, {totals.replaced} replaced, "
            f"{totals.unchanged} unchanged, {totals.pruned} pruned"
        )
        if totals.gone:
            line += f"; {totals.gone} whose files are gone kept (add --prune to remove them)"
        lines.append(line)
    if totals.levels:
        import numpy as np  # noqa: PLC0415

        levels = np.concatenate(totals.levels)
        sizes = np.concatenate(totals.sizes)
        top = int(levels.max())
        for level in range(top, -1, -1):
            of_level = sizes[levels == level]
            if len(of_level):
                name = "children" if level == 0 else ("parents" if top == 1 else f"level {level}")
                lines.append(f"spanchunk:   {name} (chars): {_percentiles(of_level)}")
    return "\n".join(lines)


def stderr() -> TextIO:
    """The stream messages go to (looked up at call time, so tests can capture it)."""
    return sys.stderr
