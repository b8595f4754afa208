"""The walk: the files of PATHs, folders walked in sorted order, globs, and what is skipped.

Globs work as ripgrep's ``-g``: matched on the path relative to each PATH argument, with
``/`` between folders; a glob without a ``/`` matches a name at any depth (``*.md``), one with
a ``/`` the whole relative path (``docs/**/*.md``); ``*`` and ``?`` stay inside one name and
``**`` spans folders. ``--exclude`` wins over ``--include`` and prunes whole folders.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from spanchunk import _core

# The kinds of skipped files, as a report counts them (the walk's are the core's words,
# ``rust/job/walk.rs``; the reading's are ``_core.write_files``'s, ``rust/job/batch.rs``).
MISSING = "missing"
NOT_REGULAR = "not a regular file"
UNREADABLE = "unreadable"
#: A link to a folder inside a folder: not followed (no folder is walked twice, and a link
#: to a folder above it would never end); counted, and listed with ``--verbose``.
FOLDER_LINK = "folder link"
FOLDER_LINK_MESSAGE = "a link to a folder, not followed (give it as a PATH to chunk it)"
BINARY = "binary"
NOT_UTF8 = "not UTF-8"
CHANGED = "changed while read"
NOT_CHUNKED = "chunking failed"
#: A file whose name is not valid UTF-8 (its path cannot be a document id, which every
#: output keeps as UTF-8 text): skipped, and reported by its name escaped (``shown``).
NAME_NOT_UTF8 = "name not UTF-8"
NAME_NOT_UTF8_MESSAGE = (
    "its name is not valid UTF-8 (shown escaped): rename it (e.g. with convmv) to chunk it"
)
#: A file of the run's own output (a store, its side files, the lock) found in a folder.
OWN_OUTPUT = "own output"

ReportSkip = Callable[[str, str, str], None]
"""Called with (path, reason kind, message) for each path that is skipped."""
ReportSettled = Callable[[str, int], None]
"""Called with (path, index) for each file a store recorded as skipped (its row ``index``)
and the walk found with the state recorded: skipped again unread."""


class File(NamedTuple):
    """A file to chunk, its name as written in the output (``source``), its size,
    modification and status change times (ns), inode and device when it was listed (what a
    store's stat cache compares), and its resolved path (its document id).

    The command line's records are named tuples, not dataclasses: a dataclass costs about a
    millisecond to create (its methods are compiled from source), and with ``dataclasses``
    imported they would be a sixth of a re-run's startup.
    """

    path: str
    size: int
    mtime_ns: int = 0
    ctime_ns: int = 0
    inode: int = 0
    device: int = 0
    #: The file's resolved path (absolute, links resolved): its document's identity.
    resolved: str = ""
    #: The bytes of a document that is not read from a file (stdin's), else None.
    data: bytes | None = None

    def document_id(self) -> str:
        """The file's document id: its resolved path (``reading.document_id``; the walk
        resolved it already)."""
        return self.resolved or os.path.realpath(self.path)


@lru_cache(maxsize=256)
def _glob_pattern(glob: str) -> re.Pattern[str]:
    anchored = "/" in glob.strip("/")
    body = glob.strip("/") if anchored else glob
    parts: list[str] = []
    position = 0
    while position < len(body):
        character = body[position]
        if body.startswith("**/", position):
            parts.append("(?:.*/)?")
            position += 3
            continue
        if body.startswith("**", position):
            parts.append(".*")
            position += 2
            continue
        if character == "*":
            parts.append("[^/]*")
        elif character == "?":
            parts.append("[^/]")
        elif character == "[":
            end = body.find("]", position + 1)
            if end == -1:
                parts.append(re.escape(character))
            else:
                inner = body[position + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                parts.append(f"[{inner}]")
                position = end
        else:
            parts.append(re.escape(character))
        position += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(parts) + r"\Z", re.DOTALL)


def glob_matches(glob: str, relative: str) -> bool:
    """Whether ``relative`` (``/``-separated, relative to a PATH argument) matches ``glob``.

    Example:
        >>> glob_matches("*.md", "docs/intro.md"), glob_matches("docs/*.md", "a/docs/x.md")
        (True, False)
    """
    return _glob_pattern(glob).match(relative) is not None


class Globs(NamedTuple):
    """The ``--include`` and ``--exclude`` globs of a run."""

    include: Sequence[str] = ()
    exclude: Sequence[str] = ()

    def excludes(self, relative: str) -> bool:
        """Whether a file or folder at ``relative`` is excluded."""
        return any(glob_matches(glob, relative) for glob in self.exclude)

    def picks(self, relative: str) -> bool:
        """Whether a file at ``relative`` is chunked."""
        if self.excludes(relative):
            return False
        return not self.include or any(glob_matches(glob, relative) for glob in self.include)


def collect_files(paths: Iterable[str], globs: Globs, report_skip: ReportSkip) -> list[File]:
    """The files to chunk, in order, as a list (see :func:`iter_files`)."""
    return list(iter_files(paths, globs, report_skip))


def iter_files(paths: Iterable[str], globs: Globs, report_skip: ReportSkip) -> Iterator[File]:
    """The files to chunk, in order: each PATH as given, folders expanded in sorted order.

    Inside folders, hidden entries (names starting with ".") and anything that is not a
    regular file are left out, and the globs pick files; folder links are not followed. A
    PATH named explicitly is chunked whatever the globs say. A PATH that is missing, or
    given explicitly but not a regular file, a folder that cannot be read, and a broken link
    inside a folder are reported. A file reached twice is chunked once.
    """
    return walk_files(start_walk(paths, globs), report_skip)


def start_walk(paths: Iterable[str], globs: Globs) -> _core.FileWalk:
    """The walk of :func:`iter_files`, started: without exclude globs, helper threads list
    the folders from now on, ahead of the run (a store's re-run reads the store's records
    meanwhile).

    The core walks (``_core.FileWalk``: a re-run into an unchanged store reads no file, and
    listing in Python, 10 us a file, would be a third of it); the globs are asked from
    there, only when given. Files come as the folders are read, so the run cuts the first
    ones while the walk goes on (listing 4,660 files first would be a tenth of a 100 MB run,
    before any cutting). The kinds of the skips are the core's words (``MISSING``,
    ``NOT_REGULAR``, ``UNREADABLE``).
    """
    from spanchunk import _core  # noqa: PLC0415

    return _core.FileWalk(
        list(paths),
        File,
        globs.excludes if globs.exclude else None,
        globs.picks if (globs.include or globs.exclude) else None,
    )


def walk_files(
    walk: _core.FileWalk,
    report_skip: ReportSkip,
    report_settled: ReportSettled | None = None,
) -> Iterator[File]:
    """The files a started walk finds, in order, its skips reported.

    Given a store's records (``FileWalk.settle_with``), the walk settles in the core the
    files whose state is the one the store recorded: those unchanged are counted there and
    never listed here; those recorded as skipped go to ``report_settled``.
    """
    for events in walk:
        for event in events:
            if type(event) is File:
                if event.path.isascii() or is_utf8(event.path):
                    yield event
                else:
                    report_skip(event.path, NAME_NOT_UTF8, NAME_NOT_UTF8_MESSAGE)
            elif len(event) == 2:
                assert report_settled is not None
                report_settled(*event)
            else:
                report_skip(*event)


def is_utf8(path: str) -> bool:
    """Whether a path (as Python's ``os`` functions give it: bytes that are not UTF-8 as
    lone surrogates) is valid UTF-8 text."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_CONTROL = {code: f"\\x{code:02x}" for code in range(32)} | {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    0x7F: "\\x7f",
}


def shown(path: str) -> str:
    """A path as one line of text, losslessly readable: bytes of a name that are not UTF-8
    as ``\\xNN`` (the name's bytes), control characters (a newline in a name) as
    ``\\n``, ``\\xNN``; any other path as it is.

    Example:
        >>> shown("a\\nb.txt"), shown(os.fsdecode(b"caf\\xe9.txt"))
        ('a\\\\nb.txt', 'caf\\\\xe9.txt')
    """
    if path.isprintable():
        return path
    if not is_utf8(path):
        path = os.fsencode(path).decode("utf-8", "backslashreplace")
    return path.translate(_CONTROL)
