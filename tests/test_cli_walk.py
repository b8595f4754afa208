"""The command line's listing (``_core.FileWalk`` behind ``iter_files``) against a reference
walk written with ``os.scandir``, on random trees: tricky and non-UTF-8 names, hidden
entries, links to files, to folders and to nothing, files reached twice, and globs."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk.ingest.files import (
    FOLDER_LINK,
    FOLDER_LINK_MESSAGE,
    MISSING,
    NAME_NOT_UTF8,
    NAME_NOT_UTF8_MESSAGE,
    NOT_REGULAR,
    UNREADABLE,
    File,
    Globs,
    is_utf8,
    iter_files,
)

Event = tuple[str, ...] | File


def reference_walk(paths: list[str], globs: Globs) -> list[Event]:  # noqa: PLR0915
    """What ``iter_files`` must find, in order: a walk in Python. A file whose path is not
    UTF-8 is skipped, in its place in the order."""
    events: list[Event] = []
    seen: set[tuple[int, int]] = set()

    def found(path: str, info: os.stat_result) -> None:
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            if not is_utf8(path):
                events.append((path, NAME_NOT_UTF8, NAME_NOT_UTF8_MESSAGE))
                return
            events.append(
                File(
                    path,
                    info.st_size,
                    info.st_mtime_ns,
                    info.st_ctime_ns,
                    info.st_ino,
                    info.st_dev,
                    os.path.realpath(path),
                )
            )

    def walk(folder: str, parts: tuple[str, ...]) -> None:
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            events.append((folder, UNREADABLE, error.strerror or str(error)))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            relative = "/".join((*parts, entry.name))
            if entry.is_dir(follow_symlinks=False):
                if not (globs.exclude and globs.excludes(relative)):
                    walk(entry.path, (*parts, entry.name))
                continue
            if (globs.include or globs.exclude) and not globs.picks(relative):
                continue
            try:
                info = os.stat(entry.path)
            except OSError as error:
                if entry.is_symlink() and isinstance(error, FileNotFoundError):
                    events.append((entry.path, MISSING, "broken symbolic link"))
                else:
                    events.append((entry.path, UNREADABLE, error.strerror or str(error)))
                continue
            if stat.S_ISREG(info.st_mode):
                found(entry.path, info)
            elif stat.S_ISDIR(info.st_mode) and entry.is_symlink():
                events.append((entry.path, FOLDER_LINK, FOLDER_LINK_MESSAGE))

    for path in paths:
        try:
            info = os.stat(path)
        except OSError as error:
            if os.path.islink(path):
                events.append((path, MISSING, "broken symbolic link"))
            else:
                kind = MISSING if isinstance(error, FileNotFoundError) else UNREADABLE
                events.append((path, kind, error.strerror or str(error)))
            continue
        if stat.S_ISDIR(info.st_mode):
            walk(path, ())
        elif stat.S_ISREG(info.st_mode):
            found(path, info)
        else:
            events.append((path, NOT_REGULAR, "not a regular file"))
    return events


def core_walk(paths: list[str], globs: Globs) -> list[Event]:
    events: list[Event] = []

    def skipped(path: str, kind: str, message: str) -> None:
        events.append((path, kind, message))

    for file in iter_files(paths, globs, skipped):
        events.append(file)
    return events


# Names: ASCII look-alikes that sort around each other, case, dots, spaces, accents and CJK,
# and bytes that are not UTF-8 (Python decodes them to lone surrogates).
NAME_PARTS = ["a", "B", "b", "-", "_", ".", " ", "é", "e\u0301", "中", "1", "10", "md", "txt"]
BAD_BYTES = [b"\xff", b"\xe2\x82", b"\xc3"]


@st.composite
def names(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.sampled_from(NAME_PARTS), min_size=1, max_size=4))
    name = "".join(parts).encode("utf-8")
    if draw(st.integers(0, 5)) == 0:
        name += draw(st.sampled_from(BAD_BYTES))
    if name in (b".", b".."):
        name += b"x"
    return name


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, bytes, bytes]]:
    """(kind, path, target) entries: files, folders, and links to earlier entries."""
    entries: list[tuple[str, bytes, bytes]] = []
    folders = [b""]
    for _ in range(draw(st.integers(1, 25))):
        parent = draw(st.sampled_from(folders))
        path = parent + b"/" + draw(names()) if parent else draw(names())
        if any(path == existing for _, existing, _ in entries):
            continue
        kind = draw(st.sampled_from(["file", "file", "folder", "link"]))
        target = b""
        if kind == "link":
            targets = [existing for _, existing, _ in entries] + [b"gone"]
            target = draw(st.sampled_from(targets))
        entries.append((kind, path, target))
        if kind == "folder":
            folders.append(path)
    return entries


GLOBS = ["*.md", "*.txt", "a*", "B", "**/b*", "a/**", "[ab]*", "?", "中*"]


def build(root: bytes, entries: list[tuple[str, bytes, bytes]]) -> None:
    for kind, path, target in entries:
        full = os.path.join(root, path)
        if kind == "folder":
            os.makedirs(full, exist_ok=True)
        elif kind == "file":
            with open(full, "wb") as handle:
                handle.write(path)
        else:
            os.symlink(os.path.join(root, target), full)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    entries=trees(),
    include=st.lists(st.sampled_from(GLOBS), max_size=2),
    exclude=st.lists(st.sampled_from(GLOBS), max_size=2),
    trailing_slash=st.booleans(),
)
def test_the_core_walk_is_the_reference_walk(
    entries: list[tuple[str, bytes, bytes]],
    include: list[str],
    exclude: list[str],
    trailing_slash: bool,
) -> None:
    root = tempfile.mkdtemp(prefix="spanchunk-walk-").encode()
    try:
        build(root, entries)
        top = os.fsdecode(root) + ("/" if trailing_slash else "")
        # The folder, then some entries again as PATHs (files, links, folders, missing).
        extra = [os.path.join(top, os.fsdecode(path)) for _, path, _ in entries[:3]]
        paths = [top, *extra, os.path.join(top, "missing")]
        globs = Globs(tuple(include), tuple(exclude))
        assert core_walk(paths, globs) == reference_walk(paths, globs)
    finally:
        shutil.rmtree(root)


def test_special_paths(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    os.symlink(tmp_path, tmp_path / "self")  # a folder link: not followed inside the walk
    paths = [
        str(tmp_path),
        str(tmp_path / "fifo"),  # named: not a regular file
        str(tmp_path / "loop"),  # a link to itself: a broken link
        str(tmp_path / "self"),  # a folder link named explicitly: walked, files seen already
        "/dev/null",
        str(tmp_path / "f.txt" / "below"),  # a file's "child": not a folder
    ]
    globs = Globs()
    events = core_walk(paths, globs)
    assert events == reference_walk(paths, globs)
    skips = [(os.path.basename(event[0]), event[1]) for event in events if type(event) is tuple]
    assert skips == [
        ("loop", UNREADABLE),  # inside the folder: too many levels of links
        ("self", FOLDER_LINK),  # inside the folder: said, not followed
        ("fifo", NOT_REGULAR),
        ("loop", MISSING),  # named: a broken link
        ("loop", UNREADABLE),  # again, through the folder link
        ("self", FOLDER_LINK),
        ("null", NOT_REGULAR),
        ("below", UNREADABLE),  # not a folder
    ]
    assert [os.path.basename(event.path) for event in events if type(event) is File] == ["f.txt"]


def test_globs_that_raise_stop_the_walk(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")

    class Broken(Globs):
        def picks(self, relative: str) -> bool:
            raise RuntimeError(f"no answer for {relative}")

    listing: Iterator[File] = iter_files(
        [str(tmp_path)], Broken(("*.txt",), ()), lambda *skip: None
    )
    try:
        next(listing)
    except RuntimeError as error:
        assert "a.txt" in str(error)
    else:
        raise AssertionError("the glob's error was swallowed")
