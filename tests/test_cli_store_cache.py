"""The ``.sqlite`` store's stat cache: a file whose state (size, mtime, ctime, inode) is the
one recorded is not read again; any other is read and hashed, and cut only when its bytes
changed; a file changed just before a run has its state left unrecorded (git's "racily
clean" rule), so the next run reads it again.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import spanchunk.ingest.statcache as cli_store
from spanchunk import Document, ParentChildChunker, SqliteRegistry
from spanchunk.cli import main

SIZES = ["--parent-size", "300", "--child-size", "60"]
TEXTS = {
    "a.txt": "Small chunks find, big chunks explain.\n\n" * 40,
    "b/c.md": "# Title\n\nIntro text.\n\n## Part\n\n" + "Body. " * 300,
    "b/d.txt": "émoji 🦀 and CJK 日本語, one line after another.\n" * 60,
    "empty.txt": "",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    for name, text in TEXTS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


@pytest.fixture
def cuts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The document ids each run cuts."""
    ids: list[str] = []
    real_cut = cli_store._core.cut_for_store

    def counted(levels: Any, datas: Any, document_ids: list[str], *args: Any) -> Any:
        ids.extend(os.path.basename(name) for name in document_ids)
        return real_cut(levels, datas, document_ids, *args)

    monkeypatch.setattr(cli_store._core, "cut_for_store", counted)
    return ids


def run(tree: Path, out: Path, *args: str) -> int:
    return main(["chunk", str(tree), *SIZES, "-o", str(out), *args])


def store_line(capsys: pytest.CaptureFixture) -> str:
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "store:" in line]
    return line


def file_states(out: Path) -> dict[str, tuple[Any, ...]]:
    connection = sqlite3.connect(out)
    rows = connection.execute(
        "SELECT document_id, file_size, file_mtime_ns, file_ctime_ns, file_inode FROM documents"
    ).fetchall()
    connection.close()
    return {os.path.basename(row[0]): row[1:] for row in rows}


def by_document(out: Path) -> dict[str, list[Any]]:
    documents: dict[str, list[Any]] = {}
    with SqliteRegistry(out) as store:
        for chunk in store:
            documents.setdefault(chunk.document_id, []).append(chunk)
    return documents


def api_tree(text: str, name: str) -> list[Any]:
    chunker = ParentChildChunker(
        300, 60, parent_chunker="markdown" if name.endswith(".md") else None
    )
    return chunker.chunk_tree(Document(text, id=name, source=name))


@pytest.mark.usefixtures("trusting")
def test_an_unchanged_folder_is_not_read_again(
    tree: Path, tmp_path: Path, reads: list[str], cuts: list[str], capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    assert "4 added" in store_line(capsys)
    assert sorted(reads) == sorted(cuts) == ["a.txt", "c.md", "d.txt", "empty.txt"]
    # Each file's state, as os.stat gives it, is recorded with its document.
    states = file_states(out)
    for name in TEXTS:
        info = os.stat(tree / name)
        state = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        assert states[os.path.basename(name)] == state
    before = by_document(out)
    reads.clear()
    cuts.clear()
    assert run(tree, out) == 0
    assert "0 added, 0 replaced, 4 unchanged, 0 pruned" in store_line(capsys)
    assert reads == [] and cuts == []
    assert by_document(out) == before


@pytest.mark.usefixtures("trusting")
def test_a_touched_file_is_read_not_cut_and_its_state_recorded_anew(
    tree: Path, tmp_path: Path, reads: list[str], cuts: list[str], capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    capsys.readouterr()
    before = by_document(out)
    reads.clear()
    cuts.clear()
    path = tree / "a.txt"
    info = os.stat(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))  # touch
    assert run(tree, out) == 0
    assert "0 added, 0 replaced, 4 unchanged" in store_line(capsys)
    assert reads == ["a.txt"] and cuts == []  # read and hashed: the same bytes
    assert file_states(out)["a.txt"][1] == info.st_mtime_ns + 5_000_000_000
    assert by_document(out) == before
    reads.clear()
    assert run(tree, out) == 0  # its new state is the one recorded now
    assert reads == []


@pytest.mark.usefixtures("trusting")
def test_a_file_changed_with_its_size_and_mtime_put_back_is_cut_again(
    tree: Path, tmp_path: Path, reads: list[str], cuts: list[str], capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    capsys.readouterr()
    path = tree / "a.txt"
    info = os.stat(path)
    text = TEXTS["a.txt"].replace("find", "seek")  # the same size
    # Past the file system clock's tick, so that the change time moves (a change within one
    # tick of the recorded state is the racy case the next test covers).
    time.sleep(0.05)
    path.write_bytes(text.encode("utf-8"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # as rsync -t or touch -d would
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        info.st_size,
        info.st_mtime_ns,
        info.st_ino,
    )
    reads.clear()
    cuts.clear()
    assert run(tree, out) == 0
    assert "0 added, 1 replaced, 3 unchanged" in store_line(capsys)
    assert reads == cuts == ["a.txt"]  # only its ctime told
    name = os.path.realpath(path)
    assert by_document(out)[name] == api_tree(text, name)

    # A file replaced by another (an editor's save: write a copy, rename it over): a new
    # inode, whatever the times say.
    other = tree / "b" / "d.txt"
    info = os.stat(other)
    copy = other.with_name("d.txt.new")
    copy.write_bytes(other.read_bytes())
    os.utime(copy, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(copy, other)
    reads.clear()
    assert run(tree, out) == 0
    assert "4 unchanged" in store_line(capsys)
    assert reads == ["d.txt"]


def test_a_file_changed_just_before_a_run_is_read_again_by_the_next(
    tree: Path, tmp_path: Path, reads: list[str], cuts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    # Written a moment ago: changed again within the same tick of the file system's clock,
    # with the same size, it would keep the state recorded. So none is recorded...
    assert set(file_states(out).values()) == {(None, None, None, None)}
    reads.clear()
    cuts.clear()
    assert run(tree, out) == 0
    assert len(reads) == 4 and cuts == []  # ...and each file is read and hashed again
    assert set(file_states(out).values()) == {(None, None, None, None)}
    # Once the files are old enough, a run records their states; the next reads nothing.
    monkeypatch.setattr(cli_store, "RACY_SECONDS", -60)
    assert run(tree, out) == 0
    assert (None, None, None, None) not in set(file_states(out).values())
    reads.clear()
    assert run(tree, out) == 0
    assert reads == []


@pytest.mark.usefixtures("trusting")
def test_a_write_through_the_api_makes_the_next_run_read_the_file(
    tree: Path, tmp_path: Path, reads: list[str]
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    name = os.path.realpath(tree / "a.txt")
    with SqliteRegistry(out) as store:
        chunks = by_document(out)[name]
        store.upsert(name, chunks[:1], content_hash="from the API")
    assert file_states(out)["a.txt"] == (None, None, None, None)
    reads.clear()
    assert run(tree, out) == 0
    assert reads == ["a.txt"]  # its hash differs: read, cut, and its document restored
    assert by_document(out)[name] == api_tree(TEXTS["a.txt"], name)


def test_two_files_that_one_path_spelling_confuses_are_two_documents(
    tree: Path, tmp_path: Path
) -> None:
    # "in/link/../a.txt" normalises to "in/a.txt", but the link makes it another file
    # (in/deep/a.txt): document ids are resolved paths, so they are two documents.
    (tree / "deep" / "x").mkdir(parents=True)
    (tree / "deep" / "a.txt").write_text("The other file, one sentence. " * 30, encoding="utf-8")
    (tree / "link").symlink_to(tree / "deep" / "x")
    out = tmp_path / "out.sqlite"
    first, second = str(tree / "a.txt"), f"{tree}/link/../a.txt"
    assert main(["chunk", first, second, *SIZES, "-o", str(out)]) == 0
    name, other = os.path.realpath(first), os.path.realpath(second)
    assert other == os.path.realpath(tree / "deep" / "a.txt")
    text = (tree / "deep" / "a.txt").read_text(encoding="utf-8")
    expected = {name: api_tree(TEXTS["a.txt"], name), other: api_tree(text, other)}
    assert by_document(out) == expected
    # In either order, into the same store: unchanged.
    assert main(["chunk", second, first, *SIZES, "-o", str(out)]) == 0
    assert by_document(out) == expected


@pytest.mark.parametrize("sync", [False, True])
def test_a_new_store_is_synced_before_its_rename_only_when_asked(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool
) -> None:
    from spanchunk.cli import build_parser, make_chunkers  # noqa: PLC0415
    from spanchunk.ingest.files import Globs, collect_files  # noqa: PLC0415
    from spanchunk.ingest.output import resolve_target  # noqa: PLC0415
    from spanchunk.ingest.store_sink import StoreSink  # noqa: PLC0415

    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    out = tmp_path / "out.sqlite"
    chunkers = make_chunkers(build_parser().parse_args(["chunk", "x", *SIZES]))
    writer = StoreSink(resolve_target(str(out)), sync=sync)
    job = writer.job(chunkers)
    result = job(collect_files([str(tree)], Globs(), print))
    for part in result.parts:
        writer.write(part.written, part.sources, part.document_ids)
    assert not out.exists()
    writer.commit()
    # The temporary file, before it was renamed (SQLite's own syncs are off in a bulk load).
    assert len(synced) == sync
    assert all(os.path.basename(path).startswith(".out.sqlite.") for path in synced)
    assert sorted(os.listdir(tmp_path)) == ["in", "out.sqlite"]
    expected = tmp_path / "expected.sqlite"
    assert run(tree, expected) == 0
    assert by_document(out) == by_document(expected)


@pytest.mark.usefixtures("trusting")
def test_skipped_files_are_recorded_and_not_read_again(
    tree: Path, tmp_path: Path, reads: list[str], capsys: pytest.CaptureFixture
) -> None:
    (tree / "image.bin").write_bytes(b"\x89PNG\x00" + bytes(100_000))
    (tree / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    assert {"image.bin", "latin.txt"} <= set(reads)
    connection = sqlite3.connect(out)
    recorded = dict(connection.execute("SELECT path, kind FROM skipped_files").fetchall())
    connection.close()
    assert {os.path.basename(path): kind for path, kind in recorded.items()} == {
        "image.bin": "binary",
        "latin.txt": "not UTF-8",
    }
    capsys.readouterr()
    reads.clear()
    assert run(tree, out) == 0
    assert reads == []  # neither the documents nor the skipped files are read again
    err = capsys.readouterr().err
    assert "2 skipped (1 binary, 1 not UTF-8)" in err
    assert "latin.txt: not UTF-8" in err  # still said, without reading it
    # A skipped file that becomes text is read again and added; a removed one is forgotten.
    (tree / "latin.txt").write_text("café, now UTF-8\n", encoding="utf-8")
    (tree / "image.bin").unlink()
    assert run(tree, out) == 0
    assert reads == ["latin.txt"]
    connection = sqlite3.connect(out)
    assert connection.execute("SELECT count(*) FROM skipped_files").fetchone()[0] == 0
    connection.close()
    assert os.path.realpath(tree / "latin.txt") in by_document(out)


@pytest.mark.usefixtures("trusting")
def test_files_settled_unread_are_said_by_the_path_given_and_still_count_as_found(
    tree: Path,
    tmp_path: Path,
    reads: list[str],
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The core settles a re-run's files by their state as the walk lists them: what it says
    # of them, and which documents it counts as gone, are those of a run that looked.
    (tree / "b" / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    monkeypatch.chdir(tree)
    capsys.readouterr()
    reads.clear()
    assert main(["chunk", "b", *SIZES, "-o", str(out), "--prune"]) == 0
    assert reads == []
    err = capsys.readouterr().err
    assert "skipped b/latin.txt: not UTF-8" in err  # the path as given, not the resolved one
    assert "0 added, 0 replaced, 2 unchanged, 0 pruned" in err  # a.txt is not under b/
    assert sorted(os.path.basename(d) for d in by_document(out)) == ["a.txt", "c.md", "d.txt"]
    # The settled files count as found: removing one prunes it alone.
    (tree / "b" / "d.txt").unlink()
    assert main(["chunk", "b", *SIZES, "-o", str(out), "--prune"]) == 0
    assert "0 added, 0 replaced, 1 unchanged, 1 pruned" in capsys.readouterr().err
    assert sorted(os.path.basename(d) for d in by_document(out)) == ["a.txt", "c.md"]


@pytest.mark.usefixtures("trusting")
def test_binaries_settled_unread_are_counted_quietly_and_named_when_verbose(
    tree: Path,
    tmp_path: Path,
    reads: list[str],
    capsys: pytest.CaptureFixture,
) -> None:
    # A re-run counts the binaries it settles in the core (they are a third of a real
    # tree's files) and says nothing of them, as a first run does; --verbose names each.
    (tree / "b" / "blob.bin").write_bytes(b"\x00\x01binary")
    (tree / "b" / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    first = capsys.readouterr().err
    assert "2 skipped (1 binary, 1 not UTF-8)" in first
    assert "blob.bin" not in first
    reads.clear()
    assert run(tree, out) == 0
    assert reads == []
    again = capsys.readouterr().err
    assert "2 skipped (1 binary, 1 not UTF-8)" in again
    assert "blob.bin" not in again and "skipped " + str(tree / "b" / "latin.txt") in again
    assert run(tree, out, "--verbose") == 0
    verbose = capsys.readouterr().err
    assert "blob.bin: binary" in verbose and "2 skipped (1 binary, 1 not UTF-8)" in verbose
