"""The ``spanchunk`` command: cut text files into parent and child chunks.

``spanchunk chunk PATH...`` reads files and folders (folders recursively, in sorted order,
hidden files and folders skipped, ``--include``/``--exclude`` globs as ripgrep's ``-g``),
cuts every file with a :class:`~spanchunk.ParentChildChunker` on ``--workers`` threads and
writes one record per chunk in input order (each document's parents first, then its
children; in Parquet, each parent followed by its children): JSON Lines (``.jsonl`` or
``-``, stdout), Parquet (``.parquet``), or the SQLite store (``.sqlite``, a
``SqliteRegistry`` file, updated incrementally when it exists). Binary files are skipped and
counted; files that are not UTF-8, or cannot be read, are reported on stderr and skipped;
the others go on.

Example:
    >>> from spanchunk.cli import main
    >>> main(["chunk", "README.md", "-o", "chunks.jsonl"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from spanchunk.cli._files import Globs, glob_matches, iter_files
from spanchunk.cli._report import Reporter, Totals, summary
from spanchunk.cli._writers import (
    PARQUET_COMPRESSIONS,
    OutputError,
    ParquetWriter,
    SqliteWriter,
    Writer,
    parquet_schema,
    writer_class,
)

if TYPE_CHECKING:
    from spanchunk.cli._files import File
    from spanchunk.cli._job import BatchJob, BatchResult, Chunkers

__all__ = ["build_parser", "glob_matches", "main", "parquet_schema", "run_chunk"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEFAULT_ENCODING = "o200k_base"
UNITS = ("char", "byte", "token", "word", "sentence", "passage", "page")
"""The size units of --unit and --child-unit (those of the API)."""


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


def _workers(value: str) -> int:
    try:
        workers = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if workers < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {workers}")
    return workers


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


DESCRIPTION = """\
Cut text files into parent chunks, and child chunks inside them.

Folders are read recursively in sorted order; hidden files and folders are skipped, and
--include / --exclude globs pick files as ripgrep's -g does (on the path relative to each
PATH; a glob without a '/' matches a name at any depth). Binary files (a NUL byte in the
first 8 KB) are skipped and counted. Each file is read as UTF-8, a byte order mark
included, so offsets match the file's text; a file that is not UTF-8 is reported on stderr
and skipped.

Output, by the name given to -o: JSON Lines ('-', the default, is stdout; .jsonl), one
object per chunk, the parents of a document first, with the keys id, document_id, source,
level (1: parent, 0: child), index, parent_id, child_ids, start_char, end_char, start_byte,
end_byte and text; chunks of Markdown files also have headings (the heading path, outermost
first). Parquet (.parquet; --compression snappy, lz4 or none): one row per chunk, the
same fields as typed columns, each parent followed by its children. Records come in input
order whatever --workers.
SQLite (.sqlite, .sqlite3, .db): the store spanchunk.SqliteRegistry(FILE) opens, parents
and children, each file one document whose id is its path (normalised).

Into an existing .sqlite store a run is incremental: a file whose bytes hash as recorded is
not cut again, a changed file replaces its document, a new one is added, and --prune removes
the documents whose files are gone, among those this run's PATHs and globs cover. The store
keeps one set of settings: a run with others is refused (use a new store). Each batch is
one transaction, so an interrupted run leaves every document old or new.

Markdown files (--format auto: names ending in .md or .markdown) get heading sections as
parents (spanchunk.MarkdownChunker); other files, plain recursive splitting."""

EPILOG = """\
examples:
  spanchunk chunk docs/ -o chunks.jsonl
  spanchunk chunk src/ -g '*.py' -g '*.md' --exclude 'tests/**' -o chunks.parquet
  spanchunk chunk book.txt --parent-size 4000 --child-size 500 --overlap 50
  spanchunk chunk notes/ --unit token --encoding cl100k_base --child-size 256
  spanchunk chunk notes.md --unit byte | head -n 3
  spanchunk chunk docs/ -o store.sqlite --prune     # again later: only what changed

exit status: 0 when at least one file was chunked; 1 when none could be, or the output
could not be written; 2 for bad usage or impossible settings; 130 when interrupted."""


def _terminal_width() -> int:
    """What ``shutil.get_terminal_size`` gives argparse's formatter: ``COLUMNS``, else the
    terminal's width, else 80 (less 2, as argparse leaves). argparse imports ``shutil`` (with
    ``bz2``, ``lzma`` and ``zlib``) for it at every ``add_argument``, 4 ms of each run."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(columns - 2, 11)


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_terminal_width())


class _RawDescriptionFormatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_terminal_width())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``spanchunk`` command."""
    parser = argparse.ArgumentParser(
        prog="spanchunk",
        description=(
            "Exact-span, parent-child (small-to-big) chunking for retrieval. "
            "Every chunk carries its exact char and byte span in the source file."
        ),
        epilog="Run 'spanchunk chunk --help' for the chunking options.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    chunk = commands.add_parser(
        "chunk",
        help="cut files into parent and child chunks: JSON Lines, Parquet or the SQLite store",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=_RawDescriptionFormatter,
    )
    chunk.set_defaults(command_parser=chunk)
    chunk.add_argument("paths", nargs="+", metavar="PATH", help="files and folders to chunk")
    sizes = chunk.add_argument_group("chunk sizes")
    sizes.add_argument(
        "--parent-size",
        type=int,
        default=2000,
        metavar="N",
        help="largest parent chunk, in units (default: 2000)",
    )
    sizes.add_argument(
        "--child-size",
        type=int,
        default=400,
        metavar="N",
        help="largest child chunk, in child units; less than --parent-size (default: 400)",
    )
    sizes.add_argument(
        "--overlap",
        type=int,
        default=0,
        metavar="N",
        help="overlap between consecutive children of a parent, in child units (default: 0)",
    )
    sizes.add_argument(
        "--unit",
        choices=UNITS,
        default="char",
        help="size unit: code points (as Python's len), UTF-8 bytes, tokens of --encoding "
        "or --tokenizer, or words, sentences, passages (blank-line blocks) or pages (form "
        "feeds) as Haystack's split_by counts them (default: char)",
    )
    sizes.add_argument(
        "--child-unit",
        choices=UNITS,
        default=None,
        help="the children's unit, when it differs from --unit (e.g. token children of "
        "char parents, to fit an embedding model, or word children of sentence parents)",
    )
    sizes.add_argument(
        "--encoding",
        default=None,
        metavar="NAME",
        help=f"tiktoken encoding of token units: o200k_base, cl100k_base, ... (default: "
        f"{DEFAULT_ENCODING}, unless --tokenizer)",
    )
    sizes.add_argument(
        "--tokenizer",
        default=None,
        metavar="PATH",
        help="a HuggingFace tokenizer.json for token units, instead of --encoding",
    )
    sizes.add_argument(
        "--merge",
        choices=("boundary", "greedy"),
        default="boundary",
        help="boundary: a chunk ends at the coarsest cut that fits (whole paragraphs, lines, "
        "sentences...); greedy: a chunk takes pieces of any level while they fit, fewer and "
        "fuller chunks (default: boundary)",
    )
    chunk.add_argument(
        "--format",
        choices=("auto", "text", "markdown"),
        default="auto",
        help="how to read the files: auto (Markdown for .md and .markdown files, else text), "
        "text or markdown (default: auto)",
    )
    picking = chunk.add_argument_group("picking files")
    picking.add_argument(
        "-g",
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="chunk only files inside folders that match GLOB (repeatable)",
    )
    picking.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files and folders that match GLOB (repeatable; wins over --include)",
    )
    chunk.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="-",
        help="FILE.jsonl or FILE.parquet, replaced atomically at the end; FILE.sqlite, the "
        "store, made atomically or updated incrementally; '-' or absent: JSON Lines on stdout",
    )
    chunk.add_argument(
        "--compression",
        choices=PARQUET_COMPRESSIONS,
        default=None,
        help="how a .parquet output's pages are compressed (default: snappy; lz4 writes "
        "faster, none fastest at about twice the size)",
    )
    chunk.add_argument(
        "--sync",
        action="store_true",
        help="flush a new output file to the disk before renaming it into place, so that it "
        "also survives a power loss (slower; the rename is atomic either way)",
    )
    chunk.add_argument(
        "--prune",
        action="store_true",
        help="with a .sqlite store: remove the documents whose files are gone (those under "
        "the PATHs given, picked by the globs)",
    )
    chunk.add_argument(
        "-j",
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="files are cut on N threads (default: every core); the output is the same",
    )
    # Threads win (the core runs without the GIL); processes stay for measuring that claim.
    chunk.add_argument(
        "--pool", choices=("thread", "process"), default="thread", help=argparse.SUPPRESS
    )
    chunk.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list the binary files that are skipped",
    )
    return parser


def _level_chunker(
    size: int, overlap: int, units: dict[str, object], markdown: bool, merge: str = "boundary"
) -> object:
    from spanchunk import MarkdownChunker, RecursiveChunker  # noqa: PLC0415

    kind = MarkdownChunker if markdown else RecursiveChunker
    extra = {} if merge == "boundary" else {"merge": merge}
    return kind(size, overlap=overlap, **extra, **units)  # type: ignore[arg-type]


def _units(unit: str, args: argparse.Namespace) -> dict[str, object]:
    if unit != "token":
        return {"unit": unit}
    if args.tokenizer is not None:
        return {"unit": unit, "tokenizer": args.tokenizer}
    return {"unit": unit, "encoding": args.encoding or DEFAULT_ENCODING}


def make_chunkers(args: argparse.Namespace) -> Chunkers:
    """The two chunkers of a run (plain and Markdown parents), from the settings.

    Raises:
        ValueError: impossible settings (the message names the fix).
    """
    from spanchunk import ParentChildChunker  # noqa: PLC0415
    from spanchunk.cli._job import Chunkers  # noqa: PLC0415

    if args.unit != "token" and (args.tokenizer or args.encoding):
        given = "--tokenizer" if args.tokenizer else "--encoding"
        if (args.child_unit or args.unit) != "token":
            raise ValueError(f"{given} applies to token units only: add --unit token")
    parent_units = _units(args.unit, args)
    child_unit = args.child_unit or args.unit
    chunkers = []
    greedy = args.merge == "greedy"
    for markdown in (False, True):
        child_chunker = None
        parent_chunker: object = "markdown" if markdown else None
        if greedy or (args.child_unit is not None and args.child_unit != args.unit):
            child_chunker = _level_chunker(
                args.child_size, args.overlap, _units(child_unit, args), markdown, args.merge
            )
        if greedy:
            parent_chunker = _level_chunker(args.parent_size, 0, parent_units, markdown, "greedy")
        chunkers.append(
            ParentChildChunker(
                parent_size=args.parent_size,
                child_size=args.child_size,
                child_overlap=args.overlap,
                parent_chunker=parent_chunker,  # type: ignore[arg-type]
                child_chunker=child_chunker,  # type: ignore[arg-type]
                **parent_units,  # type: ignore[arg-type]
            )
        )
    return Chunkers(chunkers[0], chunkers[1], args.format)


class _NothingChunked(Exception):
    """No file of the run could be chunked: the run fails and writes nothing."""


def run_chunk(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``chunk`` command; returns the exit status."""
    started = time.perf_counter()
    stderr = sys.stderr
    try:
        chunkers = make_chunkers(args)
        kind = writer_class(args.output)
    except (ValueError, OutputError) as error:
        parser.error(str(error))  # exits with status 2
    if args.output != "-" and os.path.isdir(args.output):
        parser.error(f"-o {args.output}: is a folder, give a file name")
    if args.compression is not None and kind is not ParquetWriter:
        parser.error("--compression applies to Parquet output: add -o FILE.parquet")
    if args.pool == "process" and kind is ParquetWriter:
        parser.error("Parquet row groups are encoded on threads: drop --pool process")
    if args.prune and kind is not SqliteWriter:
        parser.error("--prune applies to a .sqlite store: add -o FILE.sqlite")

    from spanchunk.cli._job import run_batches  # noqa: PLC0415

    totals = Totals(store=kind is SqliteWriter)
    reporter = Reporter(stderr, verbose=args.verbose, totals=totals)
    options = {"compression": args.compression} if args.compression is not None else {}
    opened = _open_output(kind, args.output, chunkers, parser, sync=args.sync, **options)
    if opened is None:
        return EXIT_FAILED
    writer, job = opened

    def consume(batch: Sequence[File], result: BatchResult) -> None:
        for part in result.parts:
            writer.write(part.written, part.sources, part.document_ids)
        for path, reason, message in result.skips:
            reporter.skip(path, reason, message)
        totals.add_batch(result)
        reporter.advance(len(batch), sum(file.size for file in batch))

    try:
        listed: set[str] = set()
        to_cut = _to_cut(args, reporter, job if isinstance(writer, SqliteWriter) else None, listed)
        run_batches(
            to_cut,
            job,
            args.workers or default_workers(),
            args.pool,
            consume,
            sizes=(kind.batch_bytes, kind.batch_files),
        )
        reporter.close()
        if isinstance(writer, SqliteWriter):
            _gone(writer, args, listed, totals)
        if totals.documents == 0 and not totals.pruned:
            raise _NothingChunked(
                "no file could be chunked" if totals.skipped else "no files found"
            )
        writer.commit()
    except _NothingChunked as error:
        writer.discard()
        print(f"spanchunk: error: {error}", file=stderr)
        return EXIT_FAILED
    except BaseException:
        reporter.close()
        writer.discard()
        raise

    print(summary(totals, time.perf_counter() - started), file=stderr)
    return EXIT_OK


def _to_cut(
    args: argparse.Namespace, reporter: Reporter, store_job: BatchJob | None, listed: set[str]
) -> Iterator[File]:
    """The files of the run to hand to the workers, as they are found (all of them first when
    a progress bar needs the totals); into a store, without those it settles unread."""
    listing = iter_files(args.paths, Globs(tuple(args.include), tuple(args.exclude)), reporter.skip)
    if reporter.draws_bar():
        files = list(listing)
        reporter.start(len(files), sum(file.size for file in files))
        listing = iter(files)
    if store_job is None:
        return listing
    return _not_settled(listing, store_job, listed, reporter.totals, reporter)


def _not_settled(
    listing: Iterator[File], job: BatchJob, listed: set[str], totals: Totals, reporter: Reporter
) -> Iterator[File]:
    """The files of ``listing`` that the store job must look at: those whose state is the
    one the store recorded are counted unchanged here, in the main thread, and never reach a
    worker (on an unchanged folder, handing every file to the workers and their results back
    had been a third of a re-run). Every file's document id goes into ``listed``."""
    from spanchunk.cli._store import StoreJob, document_id_of  # noqa: PLC0415

    assert isinstance(job, StoreJob)
    for file in listing:
        document_id = document_id_of(file.path)
        listed.add(document_id)
        if job.unchanged(file, document_id):
            totals.documents += 1
            totals.unchanged += 1
            totals.bytes_read += file.size
            reporter.advance(1, file.size)
        else:
            yield file


def _open_output(
    kind: type[Writer],
    output: str,
    chunkers: Chunkers,
    parser: argparse.ArgumentParser,
    *,
    sync: bool,
    **options: str,
) -> tuple[Writer, BatchJob] | None:
    """The writer of the run and its job; None (said on stderr) when the output cannot be
    written. Exits with status 2 for an output that must not be written as asked."""
    try:
        writer = kind(output, sync=sync, **options)
    except OutputError as error:
        parser.error(str(error))
    except OSError as error:
        print(
            f"spanchunk: error: cannot write {output}: {error.strerror or error}", file=sys.stderr
        )
        return None
    try:
        return writer, writer.job(chunkers)
    except OutputError as error:
        writer.discard()
        parser.error(str(error))


def _gone(writer: SqliteWriter, args: argparse.Namespace, listed: set[str], totals: Totals) -> None:
    """The store's documents whose files are gone (``listed``: the document ids of the files
    this run found): removed with --prune, else counted."""
    from spanchunk.cli._store import covered_by, gone_documents  # noqa: PLC0415

    covers = covered_by(args.paths, Globs(tuple(args.include), tuple(args.exclude)))
    gone = gone_documents(writer.stored_documents(), listed, covers)
    if args.prune:
        writer.prune(gone)
        totals.pruned = len(gone)
    else:
        totals.gone = len(gone)


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
        print(f"spanchunk: error: cannot write output: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAILED
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # not reached: parser.error exits


if __name__ == "__main__":
    sys.exit(main())
