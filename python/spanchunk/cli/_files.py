"""Picking the files of a run: folders walked in sorted order, globs, and what is skipped.

Globs work as ripgrep's ``-g``: matched on the path relative to each PATH argument, with
``/`` between folders; a glob without a ``/`` matches a name at any depth (``*.md``), one with
a ``/`` the whole relative path (``docs/**/*.md``); ``*`` and ``?`` stay inside one name and
``**`` spans folders. ``--exclude`` wins over ``--include`` and prunes whole folders.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

# How skipped files are counted in the summary, and which are reported one by one.
MISSING = "missing"
NOT_REGULAR = "not a regular file"
UNREADABLE = "unreadable"

ReportSkip = Callable[[str, str, str], None]
"""Called with (path, reason kind, message) for each path that is skipped."""


@dataclass(frozen=True)
class File:
    """A file to chunk, its name as written in the output, and its size, modification and
    status change times (ns) and inode when it was listed (what a store's stat cache
    compares)."""

    path: str
    size: int
    mtime_ns: int = 0
    ctime_ns: int = 0
    inode: int = 0

    @classmethod
    def of(cls, path: str, info: os.stat_result) -> File:
        """The file at ``path``, with the state ``os.stat`` gave."""
        return cls(path, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


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


@dataclass(frozen=True)
class Globs:
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


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


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

    Files come as the folders are read, so the run cuts the first ones while the walk goes
    on (listing 4,660 files first had been a tenth of a 100 MB run, before any cutting).
    """
    # Files by device and inode (os.path.realpath per file cost a fifth of a small run).
    seen: set[tuple[int, int]] = set()

    def new(info: os.stat_result) -> bool:
        key = (info.st_dev, info.st_ino)
        if key in seen:
            return False
        seen.add(key)
        return True

    for path in paths:
        try:
            info = os.stat(path)
        except OSError as error:
            kind = MISSING if isinstance(error, FileNotFoundError) else UNREADABLE
            if os.path.islink(path):
                report_skip(path, MISSING, "broken symbolic link")
            else:
                report_skip(path, kind, _reason(error))
            continue
        if stat.S_ISDIR(info.st_mode):
            for file, file_info in _walk_folder(path, (), globs, report_skip):
                if new(file_info):
                    yield file
        elif stat.S_ISREG(info.st_mode):
            if new(info):
                yield File.of(path, info)
        else:
            report_skip(path, NOT_REGULAR, "not a regular file")


def _walk_folder(
    folder: str, parts: tuple[str, ...], globs: Globs, report_skip: ReportSkip
) -> Iterator[tuple[File, os.stat_result]]:
    """The regular files under ``folder`` (``parts``: its path relative to the PATH), in the
    order of their relative paths, name by name: a folder's entries sorted by name, each
    folder entered where its name comes (the order of sorting every relative path)."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        report_skip(str(error.filename or folder), UNREADABLE, _reason(error))
        return
    for entry in entries:
        name = entry.name
        if _is_hidden(name):
            continue
        relative = (*parts, name)
        try:
            # A link to a folder is not followed, as os.walk does not.
            is_folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_folder = False
        if is_folder:
            if globs.exclude and globs.excludes("/".join(relative)):
                continue
            yield from _walk_folder(entry.path, relative, globs, report_skip)
            continue
        if (globs.include or globs.exclude) and not globs.picks("/".join(relative)):
            continue
        try:
            info = os.stat(entry.path)
        except OSError as error:  # a dangling link, or a file removed meanwhile
            if entry.is_symlink() and isinstance(error, FileNotFoundError):
                report_skip(entry.path, MISSING, "broken symbolic link")
            else:
                report_skip(entry.path, UNREADABLE, _reason(error))
            continue
        if stat.S_ISREG(info.st_mode):
            yield File.of(entry.path, info), info
