"""The ``spanchunk`` command: cut text files into parent and child chunks.

``spanchunk chunk PATH...`` reads files and folders (folders recursively, in sorted order,
hidden files and folders skipped, ``-g`` globs as ripgrep's), cuts every file with a
:class:`~spanchunk.ParentChildChunker` (or, with ``--sizes``, a ``HierarchicalChunker``) on
``--workers`` threads and writes one record per chunk in input order (each document's
parents first, then its children; in Parquet, each parent followed by its children): JSON
Lines (``.jsonl``, ``.jsonl.gz`` or ``-``, stdout), Parquet (``.parquet``), or the SQLite
store (``.sqlite``, a ``SqliteRegistry`` file, kept in step with the files by
``spanchunk.ingest.sync``'s run). Binary files are skipped and counted; files that are not
text, or cannot be read, are reported on stderr and skipped; the others go on.
``spanchunk info STORE`` shows what a store holds.

This package parses the arguments into the run's settings (``_parser``, ``_chunkers``),
opens the output (``_writers``), and reports (``_report``, ``_dryrun``, ``_info``); every
step of the run itself is ``spanchunk.ingest``'s.

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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from spanchunk.cli._chunkers import make_chunkers, source_file_counter
from spanchunk.cli._parser import build_parser
from spanchunk.cli._report import QUIET_KINDS, Reporter, summary, unit_names
from spanchunk.cli._writers import ParquetWriter, SqliteWriter, Writer, parquet_schema, writer_class
from spanchunk.ingest.files import File, Globs, glob_matches
from spanchunk.ingest.output import (
    OutputError,
    OwnFiles,
    RunLock,
    Target,
    check_not_an_input,
    describe_os_error,
    remove_stale_temporaries,
    resolve_target,
)

if TYPE_CHECKING:
    from spanchunk.ingest.formats import FileChunkers
    from spanchunk.ingest.run import Sink

__all__ = [
    "build_parser",
    "glob_matches",
    "main",
    "make_chunkers",
    "parquet_schema",
    "run_chunk",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def fail(message: str, status: int = EXIT_USAGE) -> int:
    """Say an error on stderr, the command line's way (no usage block: the options were
    understood; what they ask cannot be done), and return ``status``."""
    print(f"spanchunk: error: {message}", file=sys.stderr, flush=True)
    return status


def globs_of(args: argparse.Namespace) -> Globs:
    """The run's globs: ``-g GLOB`` includes, ``-g '!GLOB'`` and ``--exclude`` exclude."""
    include = tuple(glob for glob in args.include if not glob.startswith("!"))
    exclude = tuple(glob[1:] for glob in args.include if glob.startswith("!"))
    return Globs(include, exclude + tuple(args.exclude))


class ChunkRun(NamedTuple):
    """A ``chunk`` command's settings, checked: what the run does, with no ``Namespace``
    past this point."""

    paths: list[str]
    chunkers: FileChunkers
    target: Target
    kind: type[Writer]
    globs: Globs
    workers: int | None
    pool: str
    prune: bool | str
    sync: bool
    verbose: bool
    dry_run: bool
    compression: str | None
    lock_timeout: float | None
    stdin_name: str | None
    units: tuple[str, ...]
    count_sources: Any


def settings_of(args: argparse.Namespace) -> ChunkRun:
    """The run the arguments ask for.

    Raises:
        ValueError: settings that cannot work, or an output that cannot be written as
            asked (``OutputError``); the message names the fix.
    """
    chunkers = make_chunkers(args)
    target = resolve_target(args.output)
    kind = writer_class(target)
    check_not_an_input(target, args.paths)
    run = ChunkRun(
        paths=list(args.paths),
        chunkers=chunkers,
        target=target,
        kind=kind,
        globs=globs_of(args),
        workers=args.workers,
        pool=args.pool,
        prune=args.prune,
        sync=args.sync,
        verbose=args.verbose,
        dry_run=args.dry_run,
        compression=args.compression,
        lock_timeout=args.lock_timeout,
        stdin_name=args.stdin_name,
        units=unit_names(args),
        count_sources=source_file_counter(args),
    )
    refusal = _refusal(run)
    if refusal is not None:
        raise OutputError(refusal)
    return run


def run_chunk(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``chunk`` command; returns the exit status."""
    started = time.perf_counter()
    try:
        run = settings_of(args)
    except ValueError as error:
        return fail(str(error))
    stdin = _read_stdin(run)
    if run.dry_run:
        from spanchunk.cli._dryrun import DryRun  # noqa: PLC0415

        return DryRun(run).run(stdin)
    try:
        lock = RunLock(run.target, sys.stderr, run.lock_timeout)
    except TimeoutError as error:
        return fail(str(error), EXIT_FAILED)
    try:
        for name in remove_stale_temporaries(run.target):
            print(
                f"spanchunk: removed {name}, the temporary file of an earlier run into "
                f"{run.target.given} that did not finish",
                file=sys.stderr,
            )
        return _run(run, stdin=stdin, started=started)
    finally:
        lock.release()


def _refusal(run: ChunkRun) -> str | None:
    """Why the options ask for an output that cannot be written as asked (None: they do
    not)."""
    if run.compression is not None and run.kind is not ParquetWriter:
        return "--compression applies to Parquet output: add -o FILE.parquet"
    if run.pool == "process" and run.kind is ParquetWriter:
        return "Parquet row groups are encoded on threads: drop --pool process"
    if run.prune and run.kind is not SqliteWriter:
        return "--prune applies to a .sqlite store: add -o FILE.sqlite"
    if run.kind is SqliteWriter and "-" in run.paths and run.stdin_name is None:
        # A store keeps one document per id: every unnamed stdin run would replace the last.
        return (
            "text from stdin goes into a store under a document id: name it with "
            "--stdin-name NAME (each run without one would replace the last)"
        )
    if run.kind is SqliteWriter and run.target.stream:
        return (
            f"-o {run.target.given}: a store must be a regular file (SQLite writes its -wal "
            "and -shm files beside it): name a .sqlite file"
        )
    return None


def _read_stdin(run: ChunkRun) -> File | None:
    """The document of PATH '-' (stdin, read whole), as a listed file; None without one."""
    if "-" not in run.paths:
        return None
    from spanchunk.ingest.reading import document_id  # noqa: PLC0415

    data = sys.stdin.buffer.read()
    name = run.stdin_name or "-"
    resolved = "-" if run.stdin_name is None else document_id(name)
    return File(name, len(data), resolved=resolved, data=data)


def _run(run: ChunkRun, *, stdin: File | None, started: float) -> int:
    from spanchunk.ingest.report import SyncReport  # noqa: PLC0415
    from spanchunk.ingest.run import NothingChunked, run_files  # noqa: PLC0415

    stderr = sys.stderr
    store = run.kind is SqliteWriter
    report = SyncReport(store=store)
    reporter = Reporter(stderr, verbose=run.verbose)
    sink = _open_output(run)
    if isinstance(sink, int):
        return sink
    try:
        run_files(
            run.paths,
            sink,
            run.chunkers,
            report,
            globs=run.globs,
            workers=run.workers,
            pool=run.pool,
            progress=reporter,
            own=OwnFiles(run.target),
            stdin=stdin,
            prune=run.prune,
            count_sources=run.count_sources,
            require_documents=True,
        )
    except NothingChunked as error:
        return fail(str(error), EXIT_FAILED)
    except OutputError as error:
        return fail(str(error))
    print(summary(report, run.units, time.perf_counter() - started), file=stderr)
    if report.missing:
        return fail(
            f"{len(report.missing)} PATH not found: {', '.join(report.missing)}"
            if len(report.missing) == 1
            else f"{len(report.missing)} PATHs not found: {', '.join(report.missing)}",
            EXIT_FAILED,
        )
    return EXIT_OK


def _open_output(run: ChunkRun) -> Sink | int:
    """The sink of the run; the exit status (said on stderr) when the output cannot be
    written as asked."""
    from spanchunk.ingest.store_sink import StoreSink  # noqa: PLC0415

    options: dict[str, Any] = {}
    if run.compression is not None:
        options["compression"] = run.compression
    try:
        if run.kind is SqliteWriter:
            # The recorded skips a re-run settles and only counts.
            quiet = frozenset() if run.verbose else QUIET_KINDS
            return StoreSink(run.target, sync=run.sync, quiet=quiet)
        return run.kind(run.target, sync=run.sync, **options)  # type: ignore[return-value]
    except OutputError as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"cannot write {run.target.given}: {describe_os_error(error)}", EXIT_FAILED)


def run_info(args: argparse.Namespace) -> int:
    """The ``info`` command; returns the exit status."""
    from spanchunk.cli._info import info  # noqa: PLC0415

    try:
        text = info(args.store, as_json=args.json)
    except (OSError, ValueError) as error:
        return fail(str(error), EXIT_FAILED)
    print(text, flush=True)
    return EXIT_OK


def run_changes(args: argparse.Namespace) -> int:
    """The ``changes`` command; returns the exit status."""
    from spanchunk.cli._changes import export_changes  # noqa: PLC0415

    if args.acknowledge and args.consumer is None:
        args.command_parser.error("--acknowledge moves a consumer's position: add --consumer NAME")
    try:
        levels = (
            None if args.levels is None else tuple(int(level) for level in args.levels.split(","))
        )
    except ValueError:
        args.command_parser.error(f"--levels takes levels such as 0 or 0,1, not {args.levels!r}")
    try:
        upserts, deletes, since, position = export_changes(
            args.store,
            args.output,
            since=args.since,
            consumer=args.consumer,
            levels=levels,
            acknowledge=args.acknowledge,
        )
    except LookupError as error:  # ChangesCompacted
        return fail(str(error), EXIT_FAILED)
    except (OSError, ValueError, TypeError) as error:
        return fail(str(error), EXIT_FAILED)
    print(
        f"spanchunk: {upserts} upserts, {deletes} deletes, from change {since} to change "
        f"{position}" + (f" (consumer {args.consumer} moved to it)" if args.acknowledge else ""),
        file=sys.stderr,
    )
    return EXIT_OK


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
        if args.command == "info":
            return run_info(args)
        if args.command == "changes":
            return run_changes(args)
    except KeyboardInterrupt:
        print("\nspanchunk: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of stdout went away (`spanchunk info STORE | head -1`, `spanchunk chunk
        # ... | head`): stop quietly, and keep Python from complaining again when it flushes
        # stdout at exit. `info` said what was read: 0; `chunk`'s output was cut short: 1.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK if args.command == "info" else EXIT_FAILED
    except OSError as error:  # reading errors skip a file; this is the output failing
        return fail(f"cannot write the output: {describe_os_error(error)}", EXIT_FAILED)
    parser.error(f"unknown command {args.command!r}")  # exits with status 2


if __name__ == "__main__":
    sys.exit(main())
