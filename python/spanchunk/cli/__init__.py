"""The ``spanchunk`` command: cut text files into parent and child chunks, as JSON Lines.

``spanchunk chunk PATH...`` reads files and folders (folders recursively, in sorted order,
hidden files and folders skipped), cuts every file with a
:class:`~spanchunk.ParentChildChunker` and writes one JSON object per chunk, the parents of a
document first, then its children. Files that are not UTF-8, or cannot be read, are reported
on stderr and skipped; the others go on.

Example:
    >>> from spanchunk.cli import main
    >>> main(["chunk", "README.md", "-o", "chunks.jsonl"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from spanchunk import Chunk, ChunkingError, Document, ParentChildChunker

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# A progress line is only worth drawing when the run is long and someone is watching.
PROGRESS_MIN_FILES = 50
PROGRESS_INTERVAL_S = 0.1

# Only JSON Lines is written; refuse names that promise another format rather than write
# JSON into a file called out.sqlite.
UNSUPPORTED_SUFFIXES = frozenset({".parquet", ".sqlite", ".sqlite3", ".db"})

ReportSkip = Callable[[str, str], None]


def package_version() -> str:
    """The installed version of spanchunk, or the extension's when there is no install."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("spanchunk")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        try:
            from spanchunk._core import __version__  # noqa: PLC0415
        except ImportError:
            return "unknown"
        return str(__version__)


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (metadata look-ups cost a few ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS, help="print the version"
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        parser.exit(message=f"spanchunk {package_version()}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``spanchunk`` command."""
    parser = argparse.ArgumentParser(
        prog="spanchunk",
        description=(
            "Exact-span, parent-child (small-to-big) chunking for retrieval. "
            "Every chunk carries its exact char and byte span in the source file."
        ),
        epilog="Run 'spanchunk chunk --help' for the chunking options.",
    )
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    chunk = commands.add_parser(
        "chunk",
        help="cut files into parent and child chunks, written as JSON Lines",
        description=(
            "Cut text files into parent chunks, and child chunks inside them.\n"
            "\n"
            "Folders are read recursively in sorted order; hidden files and folders are\n"
            "skipped. Each file is read as UTF-8, a byte order mark included, so offsets match\n"
            "the file's text; a file that is not UTF-8 is reported on stderr and skipped.\n"
            "\n"
            "One JSON object is written per chunk, the parents of a document first, with the\n"
            "keys id, document_id, source, level (1: parent, 0: child), index, parent_id,\n"
            "child_ids, start_char, end_char, start_byte, end_byte and text; chunks of\n"
            "Markdown files also have headings (the heading path, outermost first).\n"
            "\n"
            "Markdown files (--format auto: names ending in .md or .markdown) get heading\n"
            "sections as parents (spanchunk.MarkdownChunker); other files, plain recursive\n"
            "splitting."
        ),
        epilog=(
            "examples:\n"
            "  spanchunk chunk docs/ -o chunks.jsonl\n"
            "  spanchunk chunk book.txt --parent-size 4000 --child-size 500 --overlap 50\n"
            "  spanchunk chunk notes.md --unit byte | head -n 3\n"
            "\n"
            "exit status: 0 when at least one file was chunked; 1 when none could be, or the\n"
            "output could not be written; 2 for bad usage or impossible settings."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chunk.set_defaults(command_parser=chunk)
    chunk.add_argument("paths", nargs="+", metavar="PATH", help="files and folders to chunk")
    chunk.add_argument(
        "--parent-size",
        type=int,
        default=2000,
        metavar="N",
        help="largest parent chunk, in units (default: 2000)",
    )
    chunk.add_argument(
        "--child-size",
        type=int,
        default=400,
        metavar="N",
        help="largest child chunk, in units; less than --parent-size (default: 400)",
    )
    chunk.add_argument(
        "--overlap",
        type=int,
        default=0,
        metavar="N",
        help="overlap between consecutive children of a parent, in units (default: 0)",
    )
    chunk.add_argument(
        "--unit",
        choices=("char", "byte"),
        default="char",
        help="size unit: code points (as Python's len) or UTF-8 bytes (default: char)",
    )
    chunk.add_argument(
        "--format",
        choices=("auto", "text", "markdown"),
        default="auto",
        help="how to read the files: auto (Markdown for .md and .markdown files, else text), "
        "text or markdown (default: auto)",
    )
    chunk.add_argument(
        "-o",
        "--output",
        metavar="FILE.jsonl",
        default="-",
        help="write the chunks to FILE (replaced atomically at the end); '-' or absent: stdout",
    )
    return parser


@dataclass
class Totals:
    """What a run did, for the summary line."""

    documents: int = 0
    parents: int = 0
    children: int = 0
    bytes_read: int = 0
    skipped: int = 0


class Progress:
    """A single updating line on stderr, drawn only for long runs on a terminal."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.enabled = total > PROGRESS_MIN_FILES and _isatty(stream)
        self._last_draw = 0.0
        self._drawn = False

    def update(self, done: int, bytes_read: int) -> None:
        """Redraw the line, at most every PROGRESS_INTERVAL_S seconds."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last_draw < PROGRESS_INTERVAL_S and done < self.total:
            return
        self._last_draw = now
        self.stream.write(
            f"\rspanchunk: {done}/{self.total} files, {bytes_read / 1e6:.1f} MB\x1b[K"
        )
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the line so that a message or the summary starts at column 0."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def say(self, message: str) -> None:
        """Print a message on its own line without garbling the progress line."""
        self.clear()
        print(message, file=self.stream, flush=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def collect_files(paths: Iterable[str], report_skip: ReportSkip) -> list[str]:
    """The files to chunk, in order: each PATH as given, folders expanded in sorted order.

    Inside folders, hidden entries (names starting with ".") and anything that is not a
    regular file are left out; folder links are not followed. A PATH that is missing, or
    given explicitly but not a regular file, is reported and skipped. A file reached twice
    is chunked once.
    """
    files: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(path)

    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError as error:
            report_skip(path, error.strerror or str(error))
            continue
        if stat.S_ISDIR(mode):
            for file in _walk_folder(path, report_skip):
                add(file)
        elif stat.S_ISREG(mode):
            add(path)
        else:
            report_skip(path, "not a regular file")
    return files


def _walk_folder(root: str, report_skip: ReportSkip) -> list[str]:
    def on_error(error: OSError) -> None:
        report_skip(str(error.filename or root), error.strerror or str(error))

    found: list[tuple[tuple[str, ...], str]] = []
    for folder, dirnames, filenames in os.walk(root, onerror=on_error):
        dirnames[:] = [name for name in dirnames if not _is_hidden(name)]
        for name in filenames:
            if _is_hidden(name):
                continue
            path = os.path.join(folder, name)
            try:
                is_regular = stat.S_ISREG(os.stat(path).st_mode)
            except OSError as error:  # a dangling link, or a file removed meanwhile
                report_skip(path, error.strerror or str(error))
                continue
            if is_regular:
                relative = Path(os.path.relpath(path, root)).parts
                found.append((relative, path))
    found.sort()
    return [path for _, path in found]


def decode_utf8(data: bytes) -> str:
    """Strict UTF-8 decoding that keeps a byte order mark, so offsets match the file's text.

    Raises:
        ValueError: the data is not valid UTF-8 (the message names the byte and offset).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start]
        message = f"not UTF-8 (byte 0x{byte:02x} at offset {error.start})"
        raise ValueError(message) from None


def chunk_record(chunk: Chunk, source: str) -> dict[str, object]:
    """The JSON object written for one chunk (with ``headings`` for Markdown chunks)."""
    record: dict[str, object] = {
        "id": chunk.id,
        "document_id": chunk.document_id,
        "source": source,
        "level": chunk.level,
        "index": chunk.index,
        "parent_id": chunk.parent_id,
        "child_ids": list(chunk.child_ids),
        "start_char": chunk.start_char,
        "end_char": chunk.end_char,
        "start_byte": chunk.start_byte,
        "end_byte": chunk.end_byte,
        "text": chunk.text,
    }
    headings = chunk.metadata.get("headings")
    if headings is not None:
        record["headings"] = list(headings)
    return record


def encode_chunks(chunks: Sequence[Chunk], source: str) -> bytes:
    """JSON Lines (UTF-8, "\\n" line ends, non-ASCII kept as is) for a document's chunks."""
    lines = [json.dumps(chunk_record(chunk, source), ensure_ascii=False) + "\n" for chunk in chunks]
    return "".join(lines).encode("utf-8")


class AtomicFile:
    """A file that appears under its name, complete, only when :meth:`commit` is called.

    Chunks go to a temporary file in the same folder, renamed over the target at the end, so
    a failed or interrupted run never leaves a half-written file (nor clobbers an old one).
    """

    def __init__(self, target: str) -> None:
        self.target = target
        folder = os.path.dirname(os.path.abspath(target))
        descriptor, self.temp_path = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder
        )
        self.file: BinaryIO = os.fdopen(descriptor, "wb")

    def commit(self) -> None:
        """Flush the temporary file and move it over the target."""
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        os.chmod(self.temp_path, _mode_for(self.target))
        os.replace(self.temp_path, self.target)

    def discard(self) -> None:
        """Remove the temporary file; the target is left as it was."""
        self.file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp_path)


def _mode_for(target: str) -> int:
    # mkstemp creates the file 0600; give it the mode an ordinary open() would have.
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


MARKDOWN_SUFFIXES = (".md", ".markdown")


class Chunkers:
    """The chunker for each file: Markdown parents for Markdown files, plain ones otherwise."""

    def __init__(self, text: ParentChildChunker, markdown: ParentChildChunker, fmt: str) -> None:
        self.text = text
        self.markdown = markdown
        self.format = fmt

    def for_path(self, path: str) -> ParentChildChunker:
        """The chunker for ``path``, by ``--format`` (auto: by the file name's suffix)."""
        if self.format == "markdown" or (
            self.format == "auto" and path.lower().endswith(MARKDOWN_SUFFIXES)
        ):
            return self.markdown
        return self.text


def _make_chunker(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Chunkers:
    try:
        text, markdown = (
            ParentChildChunker(
                parent_size=args.parent_size,
                child_size=args.child_size,
                child_overlap=args.overlap,
                parent_chunker=parent_chunker,
                unit=args.unit,
            )
            for parent_chunker in (None, "markdown")
        )
    except ValueError as error:
        parser.error(str(error))  # exits with status 2
    return Chunkers(text, markdown, args.format)


def _check_output(target: str, parser: argparse.ArgumentParser) -> None:
    if target == "-":
        return
    if os.path.splitext(target)[1].lower() in UNSUPPORTED_SUFFIXES:
        parser.error(f"-o {target}: only JSON Lines output is supported (use .jsonl)")
    if os.path.isdir(target):
        parser.error(f"-o {target}: is a folder, give a file name")


def run_chunk(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``chunk`` command; returns the exit status."""
    started = time.perf_counter()
    chunkers = _make_chunker(args, parser)
    _check_output(args.output, parser)

    stderr = sys.stderr
    output: AtomicFile | None = None
    if args.output == "-":
        sys.stdout.flush()
        sink: BinaryIO = sys.stdout.buffer
    else:
        try:
            output = AtomicFile(args.output)
        except OSError as error:
            print(
                f"spanchunk: error: cannot write {args.output}: {error.strerror or error}",
                file=stderr,
            )
            return EXIT_FAILED
        sink = output.file

    totals = Totals()
    progress = Progress(0, stderr)

    def report_skip(path: str, reason: str) -> None:
        totals.skipped += 1
        progress.say(f"spanchunk: skipped {path}: {reason}")

    try:
        files = collect_files(args.paths, report_skip)
        progress = Progress(len(files), stderr)
        for done, path in enumerate(files, start=1):
            _chunk_file(path, chunkers, sink, totals, report_skip)
            progress.update(done, totals.bytes_read)
        progress.clear()
        if totals.documents == 0:
            raise _NothingChunked(
                "no file could be chunked" if totals.skipped else "no files found"
            )
        if output is not None:
            output.commit()
        else:
            sink.flush()
    except _NothingChunked as error:
        if output is not None:
            output.discard()
        print(f"spanchunk: error: {error}", file=stderr)
        return EXIT_FAILED
    except BaseException:
        if output is not None:
            output.discard()
        progress.clear()
        raise

    print(_summary(totals, time.perf_counter() - started), file=stderr)
    return EXIT_OK


class _NothingChunked(Exception):
    """No file of the run could be chunked: the run fails and writes nothing."""


def _chunk_file(
    path: str,
    chunkers: Chunkers,
    sink: BinaryIO,
    totals: Totals,
    report_skip: ReportSkip,
) -> None:
    try:
        with open(path, "rb") as file:
            data = file.read()
        text = decode_utf8(data)
    except OSError as error:
        report_skip(path, error.strerror or str(error))
        return
    except ValueError as error:
        report_skip(path, str(error))
        return
    chunker = chunkers.for_path(path)
    try:
        chunks = chunker.chunk_tree(Document(text, source=path))
    except (ValueError, ChunkingError) as error:
        report_skip(path, str(error))
        return
    finally:
        # The registry is for retrieval; a batch job writes parents out instead, so keep
        # memory flat over millions of files.
        chunker.clear()
    sink.write(encode_chunks(chunks, path))
    totals.documents += 1
    totals.bytes_read += len(data)
    for chunk in chunks:
        if chunk.level == 0:
            totals.children += 1
        else:
            totals.parents += 1


def _summary(totals: Totals, elapsed: float) -> str:
    megabytes = totals.bytes_read / 1e6
    rate = megabytes / elapsed if elapsed > 0 else 0.0
    line = (
        f"spanchunk: {totals.documents} documents, {totals.parents} parents, "
        f"{totals.children} children, {megabytes:.1f} MB in {elapsed:.2f} s ({rate:.1f} MB/s)"
    )
    if totals.skipped:
        line += f", {totals.skipped} skipped"
    return line


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``spanchunk`` command and return its exit status.

    Usage errors, ``--help`` and ``--version`` exit through argparse (``SystemExit``).

    Args:
        argv: the arguments after the program name; None reads ``sys.argv``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "chunk":
            return run_chunk(args, args.command_parser)
    except KeyboardInterrupt:
        print("\nspanchunk: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of stdout went away (`spanchunk chunk ... | head`): stop quietly, and
        # keep Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except OSError as error:  # reading errors skip a file; this is the output failing
        print(f"spanchunk: error: cannot write output: {error}", file=sys.stderr)
        return EXIT_FAILED
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # not reached: parser.error exits


if __name__ == "__main__":
    sys.exit(main())
