"""The ``spanchunk`` command: cut text files into parent and child chunks.

``spanchunk chunk PATH...`` reads files and folders (folders recursively, in sorted order,
hidden files and folders skipped, ``-g`` globs as ripgrep's), cuts every file with a
:class:`~spanchunk.ParentChildChunker` on ``--workers`` threads and writes one record per
chunk in input order (each document's parents first, then its children; in Parquet, each
parent followed by its children): JSON Lines (``.jsonl``, ``.jsonl.gz`` or ``-``, stdout),
Parquet (``.parquet``), or the SQLite store (``.sqlite``, a ``SqliteRegistry`` file, updated
incrementally when it exists). Binary files are skipped and counted; files that are not
text, or cannot be read, are reported on stderr and skipped; the others go on.
``spanchunk info STORE`` shows what a store holds.

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
from typing import TYPE_CHECKING, Any

from spanchunk.cli._chunkers import make_chunkers, source_file_counter
from spanchunk.cli._files import MISSING, File, Globs, glob_matches, start_walk, walk_files
from spanchunk.cli._output import (
    OutputError,
    OwnFiles,
    RunLock,
    Target,
    check_not_an_input,
    describe_os_error,
    remove_stale_temporaries,
    resolve_target,
)
from spanchunk.cli._parser import build_parser, default_workers
from spanchunk.cli._report import (
    OWN_OUTPUT,
    QUIET_KINDS,
    Reporter,
    Totals,
    summary,
    unit_names,
)
from spanchunk.cli._writers import (
    ParquetWriter,
    SqliteWriter,
    Writer,
    parquet_schema,
    writer_class,
)

if TYPE_CHECKING:
    from spanchunk import _core
    from spanchunk.cli._job import BatchJob, BatchResult, Chunkers

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


class _NothingChunked(Exception):
    """No file of the run could be chunked: the run fails and writes nothing."""


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


def run_chunk(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``chunk`` command; returns the exit status."""
    started = time.perf_counter()
    try:
        chunkers = make_chunkers(args)
        target = resolve_target(args.output)
        kind = writer_class(target)
        check_not_an_input(target, args.paths)
        refusal = _refusal(args, target, kind)
    except (ValueError, OutputError) as error:
        refusal = str(error)
    if refusal is not None:
        return fail(refusal)
    stdin = _read_stdin(args)
    if args.dry_run:
        from spanchunk.cli._dryrun import DryRun  # noqa: PLC0415

        return DryRun(args, chunkers, target, kind, globs_of(args)).run(stdin)
    lock = RunLock(target, sys.stderr)
    try:
        for name in remove_stale_temporaries(target):
            print(
                f"spanchunk: removed {name}, the temporary file of an earlier run into "
                f"{target.given} that did not finish",
                file=sys.stderr,
            )
        return _run(args, chunkers, target, kind, stdin=stdin, started=started)
    finally:
        lock.release()


def _refusal(args: argparse.Namespace, target: Target, kind: type[Writer]) -> str | None:
    """Why the options ask for an output that cannot be written as asked (None: they do
    not)."""
    if args.compression is not None and kind is not ParquetWriter:
        return "--compression applies to Parquet output: add -o FILE.parquet"
    if args.pool == "process" and kind is ParquetWriter:
        return "Parquet row groups are encoded on threads: drop --pool process"
    if args.prune and kind is not SqliteWriter:
        return "--prune applies to a .sqlite store: add -o FILE.sqlite"
    if kind is SqliteWriter and "-" in args.paths and args.stdin_name is None:
        # A store keeps one document per id: every unnamed stdin run would replace the last.
        return (
            "text from stdin goes into a store under a document id: name it with "
            "--stdin-name NAME (each run without one would replace the last)"
        )
    if kind is SqliteWriter and target.stream:
        return (
            f"-o {target.given}: a store must be a regular file (SQLite writes its -wal and "
            "-shm files beside it): name a .sqlite file"
        )
    return None


def _read_stdin(args: argparse.Namespace) -> File | None:
    """The document of PATH '-' (stdin, read whole), as a listed file; None without one."""
    if "-" not in args.paths:
        return None
    from spanchunk.cli._store import document_id_of  # noqa: PLC0415

    data = sys.stdin.buffer.read()
    name = args.stdin_name or "-"
    document_id = "-" if args.stdin_name is None else document_id_of(name)
    return File(name, len(data), resolved=document_id, data=data)


def _run(
    args: argparse.Namespace,
    chunkers: Chunkers,
    target: Target,
    kind: type[Writer],
    *,
    stdin: File | None,
    started: float,
) -> int:
    from spanchunk.cli._job import run_batches  # noqa: PLC0415

    stderr = sys.stderr
    totals = Totals(store=kind is SqliteWriter, units=unit_names(args))
    reporter = Reporter(stderr, verbose=args.verbose, totals=totals)
    options: dict[str, Any] = {}
    if args.compression is not None:
        options["compression"] = args.compression
    if kind is SqliteWriter:  # the recorded skips a re-run settles and only counts
        options["quiet"] = frozenset() if args.verbose else QUIET_KINDS
    # The folders are listed from now on, while the output opens (a store's records read).
    walk = start_walk([path for path in args.paths if path != "-"], globs_of(args))
    opened = _open_output(kind, target, chunkers, sync=args.sync, **options)
    if isinstance(opened, int):
        return opened
    writer, job = opened
    store = writer if isinstance(writer, SqliteWriter) else None

    count_sources = source_file_counter(args)

    def consume(batch: Sequence[File], result: BatchResult) -> None:
        for part in result.parts:
            writer.write(part.written, part.sources, part.document_ids)
        for path, reason, message in result.skips:
            reporter.skip(path, reason, message)
        if count_sources is not None:
            totals.source_as_text += count_sources(file.path for file in batch) - count_sources(
                path for path, _reason, _message in result.skips
            )
        if store is not None:
            store.skipped.extend(result.skipped_files)
        totals.add_batch(result)
        reporter.advance(len(batch), result.bytes_read)

    try:
        listed: set[str] = set()
        to_cut = _to_cut(
            args,
            reporter,
            store,
            listed,
            walk,
            target=target,
            stdin=stdin,
        )
        run_batches(
            to_cut,
            job,
            args.workers or default_workers(),
            args.pool,
            consume,
            sizes=(kind.batch_bytes, kind.batch_files),
        )
        reporter.close()
        if store is not None:
            if store.recorded is not None:  # the files the walk settled unchanged
                unchanged, unchanged_bytes = store.recorded.unchanged()
                totals.documents += unchanged
                totals.unchanged += unchanged
                totals.bytes_read += unchanged_bytes
                totals.skipped.update(store.recorded.quiet_settled_kinds())
            _gone(store, args, listed, totals)
        if totals.documents == 0 and not totals.pruned:
            raise _NothingChunked(_nothing_chunked(totals, args))
        writer.commit()
    except _NothingChunked as error:
        writer.discard()
        return fail(str(error), EXIT_FAILED)
    except BaseException:
        reporter.close()
        writer.discard()
        raise

    print(summary(totals, time.perf_counter() - started), file=stderr)
    if totals.missing:
        return fail(
            f"{len(totals.missing)} PATH not found: {', '.join(totals.missing)}"
            if len(totals.missing) == 1
            else f"{len(totals.missing)} PATHs not found: {', '.join(totals.missing)}",
            EXIT_FAILED,
        )
    return EXIT_OK


def _nothing_chunked(totals: Totals, args: argparse.Namespace) -> str:
    """Why a run chunked nothing, by reason, with the fix where there is one."""
    skipped = {kind: count for kind, count in totals.skipped.items() if kind != OWN_OUTPUT}
    if not skipped:
        if totals.missing and len(totals.missing) == len(args.paths):
            return "no file could be chunked: no PATH given exists"
        return "no files found (hidden files and folders are skipped; check the PATHs and -g globs)"
    reasons = ", ".join(f"{count} {kind}" for kind, count in sorted(skipped.items()))
    advice = ""
    if "not UTF-8" in skipped:
        advice = "; for text in another encoding, add --input-encoding (e.g. latin-1)"
    elif set(skipped) == {"binary"}:
        advice = "; binary files (a NUL byte in their first 8 KB) are never chunked"
    return f"no file could be chunked: {reasons}{advice}"


def _to_cut(
    args: argparse.Namespace,
    reporter: Reporter,
    store: SqliteWriter | None,
    listed: set[str],
    walk: _core.FileWalk,
    *,
    target: Target,
    stdin: File | None,
) -> Iterator[File]:
    """The files of the run to hand to the workers, as they are found (all of them first when
    a progress bar needs the totals), without the run's own output files; into a store,
    without those it settles unread."""
    named = set(args.paths)
    totals = reporter.totals

    def report_skip(path: str, kind: str, message: str) -> None:
        if kind == MISSING and path in named:
            totals.missing.append(path)
        reporter.skip(path, kind, message)

    recorded = store.recorded if store is not None else None
    if recorded is not None:
        walk.settle_with(recorded)

    def report_settled(path: str, index: int) -> None:
        assert recorded is not None  # only a walk settled with a store's records calls this
        _, kind, message = recorded.skip_row(index)[:3]
        reporter.skip(path, kind, message)
        reporter.advance(1, 0)

    listing = _inputs(
        walk_files(walk, report_skip, report_settled),
        target,
        reporter,
        stdin,
    )
    if reporter.draws_bar():
        files = list(listing)
        reporter.start(len(files), sum(file.size for file in files))
        listing = iter(files)
    if store is None:
        return listing
    return _listed(listing, listed, store)


def _inputs(
    listing: Iterator[File], target: Target, reporter: Reporter, stdin: File | None
) -> Iterator[File]:
    """The listed files less the run's own output files (left out, counted quietly), with
    stdin's document where '-' was given (after the files: read before any of them)."""
    own = OwnFiles(target)
    for file in listing:
        if file in own:
            reporter.skip(file.path, OWN_OUTPUT, "the run's own output, never an input")
        else:
            yield file
    if stdin is not None:
        yield stdin


def _listed(listing: Iterator[File], listed: set[str], store: SqliteWriter) -> Iterator[File]:
    """The files of ``listing``, each one's document id put into ``listed``, the store's
    content hashes read before the first. The files whose state is the one the store
    recorded never come here: the walk settles them in the core (``_core.RecordedFiles``:
    unchanged, or skipped again unread), where a Python object and a set lookup per file had
    been a third of a re-run over a tree."""
    from spanchunk.cli._store import file_document_id  # noqa: PLC0415

    add = listed.add
    for file in listing:
        store.load_hashes()
        add(file.resolved or file_document_id(file))
        yield file


def _open_output(
    kind: type[Writer],
    target: Target,
    chunkers: Chunkers,
    *,
    sync: bool,
    **options: Any,
) -> tuple[Writer, BatchJob] | int:
    """The writer of the run and its job; the exit status (said on stderr) when the output
    cannot be written as asked."""
    try:
        writer = kind(target, sync=sync, **options)
    except OutputError as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"cannot write {target.given}: {describe_os_error(error)}", EXIT_FAILED)
    try:
        job = writer.job(chunkers)
    except OutputError as error:
        writer.discard()
        return fail(str(error))
    except BaseException:
        writer.discard()
        raise
    return writer, job


def _gone(writer: SqliteWriter, args: argparse.Namespace, listed: set[str], totals: Totals) -> None:
    """The store's documents whose files are gone (``listed``: the document ids of the files
    this run handed to the job; the walk knows those it settled): removed with --prune, else
    counted. A new store holds only what this run listed: none is gone."""
    from spanchunk.cli._store import covered_by, gone_documents  # noqa: PLC0415

    recorded = writer.recorded
    if recorded is None:
        return
    covers = covered_by(args.paths, globs_of(args))
    writer.replaces = lambda path: path in listed or recorded.seen(path) or covers(path)
    gone = gone_documents(recorded.unseen_documents(), listed, covers)
    if args.prune:
        writer.prune(gone)
        totals.pruned = len(gone)
        # A PATH that is gone but whose document the store held: pruned, not missing.
        pruned = set(gone)
        totals.missing = [path for path in totals.missing if os.path.realpath(path) not in pruned]
    else:
        totals.gone = len(gone)


def run_info(args: argparse.Namespace) -> int:
    """The ``info`` command; returns the exit status."""
    from spanchunk.cli._info import info  # noqa: PLC0415

    try:
        print(info(args.store, as_json=args.json))
    except (OSError, ValueError) as error:
        return fail(str(error), EXIT_FAILED)
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
        return fail(f"cannot write the output: {describe_os_error(error)}", EXIT_FAILED)
    parser.error(f"unknown command {args.command!r}")  # exits with status 2


if __name__ == "__main__":
    sys.exit(main())
