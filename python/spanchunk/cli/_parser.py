"""The ``spanchunk`` command line: its options, as ``spanchunk chunk --help`` shows them."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from spanchunk.cli._writers import PARQUET_COMPRESSIONS

__all__ = ["DEFAULT_ENCODING", "UNITS", "build_parser", "package_version"]

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
        # On stdout, as every tool prints its version (argparse's own action does too).
        print(f"spanchunk {package_version()}", file=sys.stdout, flush=True)
        parser.exit()


def _workers(value: str) -> int:
    try:
        workers = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if workers < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {workers}")
    return workers


def _prune(value: str) -> bool | str:
    if value != "all":
        raise argparse.ArgumentTypeError(f"--prune takes no value or 'all', got {value!r}")
    return value


def _sizes(value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a list of sizes: {value!r} (e.g. 1600,400,100)"
        ) from None
    if len(sizes) < 2:
        raise argparse.ArgumentTypeError(f"two sizes or more, the top first, got {value!r}")
    return sizes


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return seconds


DESCRIPTION = """\
Cut text files into parent chunks, and child chunks inside them.

Folders are read recursively in sorted order; hidden files and folders are skipped, and
globs (-g) pick files by their paths, as ripgrep's -g does: on the path relative to each
PATH, with '/' between folders; a glob without a '/' matches a name at any depth, and a
glob that starts with '!' excludes. Binary files (a NUL byte in the first 8 KB, of which
no more is read) are skipped and counted. Files are read as UTF-8, a byte order mark
included, so offsets match the file's text; UTF-16 and UTF-32 files with a byte order mark
are decoded (offsets are then those of the decoded text); --input-encoding reads files in
another encoding. A file that is not text is reported on stderr and skipped. PATH '-' reads
one document from stdin (named by --stdin-name).

Output, by the name given to -o: JSON Lines ('-', the default, is stdout; .jsonl, or
.jsonl.gz compressed), one object per chunk, the parents of a document first, with the keys
id, document_id, source, level (1: parent, 0: child), index, parent_id, child_ids,
start_char, end_char, start_byte, end_byte and text; chunks of Markdown files also have
headings (the heading path, outermost first), chunks of source code symbols (the names of
the enclosing definitions, outermost first) and language. Parquet (.parquet; --compression
snappy, lz4 or none): one row per chunk, the same fields as typed columns, each parent
followed by its children. SQLite (.sqlite, .sqlite3, .db): the store
spanchunk.SqliteRegistry(FILE) opens, parents and children. Records come in input order
whatever --workers. A file output is replaced whole at the end (written beside it first;
through a symbolic link, its target); a device or a FIFO (/dev/stdout, /dev/null) is written
to as it is. The output and the files written beside it are never inputs: naming one as a
PATH is refused, and inside a folder they are left out. A second run into the same output
waits for the first.

One identity for a file in every output: its document id is its resolved path (absolute,
links resolved), so the same file and settings give the same chunk ids in JSON Lines,
Parquet and the store, whatever the folder the run starts in, and two files with the same
text get different ids.

Into an existing .sqlite store a run is incremental: a file whose bytes hash as recorded is
not cut again, a changed file replaces its document, a new one is added, and --prune removes
the documents whose files are gone, among those under the PATHs given (resolved) and picked
by the globs. The store keeps one set of settings: a run with others is refused, naming
each difference. Each batch is one transaction, so an interrupted run leaves every document
old or new. --dry-run says what a run would do and writes nothing.

Markdown files (--format auto: names ending in .md or .markdown) get heading sections as
parents (spanchunk.MarkdownChunker); HTML pages (.html, .htm, .xhtml) are cut as their
readable text, sections by their headings, each chunk with the byte range of the page it
came from (spanchunk.HtmlChunker); with --format code, source code too (.py, .rs, .js,
.ts, .tsx, .go, .java, .c, .h, .cpp and the like, or every file with --language) gets its
definitions as parents (spanchunk.CodeChunker); other files, plain recursive splitting."""

EPILOG = """\
examples:
  spanchunk chunk docs/ -o chunks.jsonl
  spanchunk chunk src/ -g '*.py' -g '*.md' -g '!tests/**' -o chunks.parquet
  spanchunk chunk book.txt --parent-size 4000 --child-size 500 --overlap 50
  spanchunk chunk notes/ --unit token --encoding cl100k_base --child-size 256
  spanchunk chunk notes.md --unit byte | head -n 3
  spanchunk chunk docs/ -o store.sqlite --prune     # again later: only what changed
  spanchunk chunk docs/ -o store.sqlite --dry-run   # what a run would do
  curl -s https://example.com/page.md | spanchunk chunk - --stdin-name page.md
  spanchunk info store.sqlite

exit status: 0 when every PATH was found and at least one file was chunked; 1 when a PATH
is missing (the others are still chunked), when no file could be chunked, or when the
output could not be written; 2 for bad usage or impossible settings; 130 when
interrupted."""


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
    chunk.add_argument(
        "paths", nargs="+", metavar="PATH", help="files and folders to chunk; '-' reads stdin"
    )
    sizes = chunk.add_argument_group("chunk sizes")
    sizes.add_argument(
        "--parent-size",
        type=int,
        default=None,
        metavar="N",
        help="largest parent chunk, in units (default: 2000)",
    )
    sizes.add_argument(
        "--child-size",
        type=int,
        default=None,
        metavar="N",
        help="largest child chunk, in child units; less than --parent-size (default: 400)",
    )
    sizes.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        metavar="N,N,...",
        help="every level's largest chunk, the top first, for three levels or more (e.g. "
        "1600,400,100: each chunk inside one of the level above, the last the leaves); "
        "instead of --parent-size and --child-size",
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
        choices=("auto", "text", "markdown", "html", "code"),
        default="auto",
        help="how to read the files: auto (Markdown for .md and .markdown files, HTML pages "
        "for .html, .htm and .xhtml, else text), text, markdown, html, or code (as auto, and "
        "source code by its file name's ending as code: definitions as parents, about 10x "
        "slower to cut) (default: auto)",
    )
    chunk.add_argument(
        "--language",
        default=None,
        metavar="NAME",
        help="with --format code: the files' programming language (python, rust, javascript, "
        "typescript, tsx, go, java, c, cpp), instead of each file's by its name's ending",
    )
    pages = chunk.add_mutually_exclusive_group()
    pages.add_argument(
        "--pages",
        default=None,
        metavar="REGEX",
        help="the page markers of text converted from PDF, as a regular expression (a named "
        "group 'page' gives the number of the page a marker starts; see docs/pages.md); every "
        "chunk of a file with markers carries page_first and page_last (default: form feeds "
        "and the markers of docling, marker, pymupdf4llm and HTML page comments)",
    )
    pages.add_argument(
        "--no-pages",
        action="store_true",
        help="mark no pages: no page_first and page_last, whatever the files hold",
    )
    chunk.add_argument(
        "--input-encoding",
        default=None,
        metavar="NAME",
        help="the files' text encoding, when it is not UTF-8: any Python codec name "
        "(latin-1, cp1252, shift_jis, ...). Offsets are then those of the decoded text "
        "(default: UTF-8, and UTF-16 or UTF-32 where a byte order mark says so)",
    )
    chunk.add_argument(
        "--stdin-name",
        default=None,
        metavar="NAME",
        help="the source (and document) name of the text read from PATH '-', as a file of "
        "that name would have: its suffix picks Markdown or a language (default: '-')",
    )
    picking = chunk.add_argument_group("picking files")
    picking.add_argument(
        "-g",
        "--glob",
        "--include",
        dest="include",
        action="append",
        default=[],
        metavar="GLOB",
        help="chunk only the files whose paths match GLOB (repeatable); '!GLOB' excludes "
        "the files and folders whose paths match it",
    )
    picking.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out the files and folders whose paths match GLOB (repeatable; wins over "
        "-g; the same as -g '!GLOB')",
    )
    chunk.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="-",
        help="FILE.jsonl (.jsonl.gz) or FILE.parquet, replaced atomically at the end; "
        "FILE.sqlite, the store, made atomically or updated incrementally; '-' or absent: "
        "JSON Lines on stdout",
    )
    chunk.add_argument(
        "-n",
        "--dry-run",
        action="store_true",
        help="list what the run would read and do (added, replaced, unchanged, pruned, "
        "skipped) on stdout, and write nothing",
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
        nargs="?",
        const=True,
        default=False,
        choices=(True, "all"),
        type=_prune,
        metavar="all",
        help="with a .sqlite store: remove the documents whose files are gone (those under "
        "the PATHs given, resolved, and picked by the globs). A PATH that does not exist or "
        "a folder that cannot be listed keeps its documents (the summary counts them); "
        "--prune=all removes those too",
    )
    chunk.add_argument(
        "--lock-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="wait at most SECONDS for another run writing the same output (default: as "
        "long as it takes; the wait is said on stderr)",
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

    info = commands.add_parser(
        "info",
        help="what a store holds: its settings, documents, chunks per level, sizes",
        description="Show what a spanchunk store holds: the settings that filled it, its "
        "documents, its chunks per level and their sizes, the files it skipped, and the "
        "size of its file. It never creates or changes a store.",
        formatter_class=_Formatter,
    )
    info.set_defaults(command_parser=info)
    info.add_argument("store", metavar="STORE", help="a .sqlite store made by spanchunk")
    info.add_argument("--json", action="store_true", help="one JSON object, for scripts")

    changes = commands.add_parser(
        "changes",
        help="what changed in a store since a change number: the feed for a vector database",
        description="Write the change feed of a spanchunk store: the chunks added or "
        "changed since a change number (upserts, with their text, offsets and a hash of the "
        "text) and the ids removed (deletes), as JSON Lines (one record a line, deletes "
        "first) or Parquet. The summary on stderr gives the position to read from next "
        "time. It never changes the chunks of a store.",
        formatter_class=_Formatter,
    )
    changes.set_defaults(command_parser=changes)
    changes.add_argument("store", metavar="STORE", help="a .sqlite store made by spanchunk")
    start = changes.add_mutually_exclusive_group(required=True)
    start.add_argument(
        "--since",
        type=int,
        metavar="N",
        help="the changes after change N (0: the whole state)",
    )
    start.add_argument(
        "--consumer",
        metavar="NAME",
        help="the changes after the position the store keeps for consumer NAME",
    )
    changes.add_argument(
        "--levels",
        metavar="L,...",
        help="only these levels (0: the children, which are embedded); default: all",
    )
    changes.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="FILE",
        help="FILE.jsonl, or FILE.parquet (needs pyarrow); default: stdout",
    )
    changes.add_argument(
        "--acknowledge",
        action="store_true",
        help="with --consumer: move its position to the end of this feed once it is "
        "written (apply the feed first when it is written to stdout)",
    )
    return parser
