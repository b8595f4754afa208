"""What a run tells its user on stderr: skipped files, a progress bar, and the summary."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

from spanchunk import _core
from spanchunk.ingest.files import FOLDER_LINK, OWN_OUTPUT, shown

if TYPE_CHECKING:
    from spanchunk.ingest.report import SyncReport

# Skipped files of these kinds are counted, and listed only with --verbose: a source tree can
# hold thousands of binaries, and a line for each buried the messages that matter.
QUIET_KINDS = frozenset({"binary", OWN_OUTPUT, FOLDER_LINK})

# The progress bar is drawn for runs that take a while, on a terminal only.
PROGRESS_MIN_BYTES = 20_000_000
PROGRESS_MIN_FILES = 50


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


#: How the summary names each unit's sizes.
UNIT_WORDS = {
    "char": "chars",
    "byte": "bytes",
    "token": "tokens",
    "word": "words",
    "sentence": "sentences",
    "passage": "passages",
    "page": "pages",
}


def unit_names(args: Any) -> tuple[str, ...]:
    """The unit of each level of a run, the leaves first (the children's, the parents')."""
    if getattr(args, "sizes", None):
        return (args.unit,) * len(args.sizes)
    return (args.child_unit or args.unit, args.unit)


class Reporter:
    """Messages about skipped files, and a tqdm progress bar on a terminal: the command
    line's ``ingest.Progress``."""

    def __init__(self, stream: TextIO, *, verbose: bool) -> None:
        self.stream = stream
        self.verbose = verbose
        self._bar: Any = None

    def skip(self, path: str, kind: str, message: str) -> None:
        """Say a path is skipped, unless it is a quiet kind (and not --verbose)."""
        if self.verbose or kind not in QUIET_KINDS:
            self.say(f"spanchunk: skipped {shown(path)}: {message}")

    def say(self, message: str) -> None:
        """Print a line without garbling the progress bar."""
        if self._bar is not None:
            self._bar.write(message, file=self.stream)
        else:
            print(message, file=self.stream, flush=True)

    def wants_totals(self) -> bool:
        """Whether a run may draw a progress bar (stderr is a terminal): its files are
        listed before the run starts, for the bar's totals."""
        return _isatty(self.stream)

    def start(self, files: int, total_bytes: int) -> None:
        """Draw a progress bar when stderr is a terminal and the run is not tiny. The bar
        counts files (skipped ones too, so it ends full) and shows the text read: a tree's
        binaries, skipped unread, had made a bar of bytes jump."""
        if not self.wants_totals() or (
            files < PROGRESS_MIN_FILES and total_bytes < PROGRESS_MIN_BYTES
        ):
            return
        from tqdm import tqdm  # noqa: PLC0415  (only on a terminal: the import costs 30 ms)

        self._bar = tqdm(
            total=files,
            unit=" files",
            file=self.stream,
            desc="spanchunk",
            dynamic_ncols=True,
            leave=False,
            postfix="0.0 MB of text",
        )
        self._text_bytes = 0

    def advance(self, files: int, text_bytes: int) -> None:
        """Move the bar on by a batch of ``files`` files holding ``text_bytes`` of text."""
        if self._bar is not None:
            self._text_bytes += text_bytes
            self._bar.set_postfix_str(f"{self._text_bytes / 1e6:.1f} MB of text", refresh=False)
            self._bar.update(files)

    def close(self) -> None:
        """Erase the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _percentiles(sizes: _core.ChunkSizes, level: int) -> str:
    # Nearest-rank percentiles, ordered in the core (np.percentile cost a quarter second on
    # a small run, most of it its first call; sorting a Python list, a tenth on 100 MB).
    p50, p90, p99, largest = sizes.percentiles(level, [0.5, 0.9, 0.99, 1.0])
    return f"p50 {p50}, p90 {p90}, p99 {p99}, max {largest}"


def summary(totals: SyncReport, units: tuple[str, ...], elapsed: float) -> str:
    """The summary lines: counts, skipped by reason, chunk sizes per level, MB/s of the
    text cut (a store's unchanged documents are counted, not timed: they were not read)."""
    cut = totals.bytes_read - totals.unchanged_bytes
    rate = cut / 1e6 / elapsed if elapsed > 0 else 0.0
    lines = [
        f"spanchunk: {totals.documents} documents, {totals.parents} parents, "
        f"{totals.children} children, {totals.bytes_read / 1e6:.1f} MB"
    ]
    if totals.unchanged and cut == 0:
        lines[0] += f" unchanged, in {elapsed:.2f} s"
    else:
        lines[0] += f" in {elapsed:.2f} s ({rate:.1f} MB/s of text cut)"
    if totals.skipped:
        reasons = ", ".join(f"{count} {kind}" for kind, count in sorted(totals.skipped.items()))
        lines[0] += f", {totals.skipped.total()} skipped ({reasons})"
    if totals.store:
        line = (
            f"spanchunk:   store: {totals.added} added, {totals.replaced} replaced, "
            f"{totals.unchanged} unchanged, {totals.pruned} pruned"
        )
        if totals.change_number is not None:
            line += f"; change {totals.change_number}"
        if totals.gone:
            line += f"; {totals.gone} whose files are gone kept (add --prune to remove them)"
        if totals.stale:
            line += f"; {totals.stale} whose files were skipped this time keep their last version"
        if totals.unreachable:
            line += (
                f"; {totals.unreachable} under a PATH or folder that could not be read kept "
                "(--prune=all removes them)"
            )
        lines.append(line)
    if totals.source_as_text:
        lines.append(
            f"spanchunk:   {totals.source_as_text} source files cut as plain text: "
            "--format code cuts them at their functions and classes"
        )
    top = totals.sizes.levels() - 1
    for level in range(top, -1, -1):
        if totals.sizes.count(level):
            name = "children" if level == 0 else ("parents" if top == 1 else f"level {level}")
            unit = units[min(level, len(units) - 1)]
            words = UNIT_WORDS.get(unit, unit)
            lines.append(f"spanchunk:   {name} ({words}): {_percentiles(totals.sizes, level)}")
    return "\n".join(lines)


def stderr() -> TextIO:
    """The stream messages go to (looked up at call time, so tests can capture it)."""
    return sys.stderr
