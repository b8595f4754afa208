"""The ``.sqlite`` store's snapshot of its file states (``file_states``): a re-run reads the
states of its documents and skipped files in one fetch; any change to them, by whoever
writes, deletes the snapshot (triggers), and the run that finds none reads the tables' rows
and writes it again; a snapshot that does not read is never trusted.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import spanchunk.ingest.statcache as cli_store
from hypothesis import given, settings
from hypothesis import strategies as st
from spanchunk import SqliteRegistry, _core
from spanchunk.cli import main
from spanchunk.stores import records
from spanchunk.stores.schema import SCHEMA, WRITE_FILE_STATES

pytestmark = pytest.mark.usefixtures("trusting")

SIZES = ["--parent-size", "300", "--child-size", "60"]
#: Names with the snapshot's own punctuation, digits, a line feed and non-ASCII text.
NAMES = {
    "a.txt": "Small chunks find, big chunks explain.\n\n" * 20,
    "12:3;4,5.txt": "digits and separators in a name\n" * 10,
    "line\nfeed.txt": "a line feed in the name\n",
    "b/日本語 🦀.md": "# Title\n\nBody.\n",
    "b/blob.bin": "\0 binary",
    "latin.txt": "caf\xe9",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    for name, text in NAMES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("latin-1" if name == "latin.txt" else "utf-8"))
    return root


def run(tree: Path, out: Path, *args: str) -> int:
    return main(["chunk", str(tree), *SIZES, "-o", str(out), *args])


def snapshot(out: Path) -> tuple[bytes, bytes] | None:
    connection = sqlite3.connect(out)
    try:
        row = connection.execute("SELECT documents, skipped FROM file_states").fetchone()
    finally:
        connection.close()
    return None if row is None else (row[0], row[1])


def store_line(capsys: pytest.CaptureFixture[str]) -> str:
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "store:" in line]
    return line


def rows_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: Any) -> Any:
        raise AssertionError("the tables' rows were read")

    monkeypatch.setattr(SqliteRegistry, "document_states", refused)
    monkeypatch.setattr(SqliteRegistry, "skipped_rows", refused)


def test_a_rerun_reads_the_snapshot_alone_and_writes_nothing(
    tree: Path,
    tmp_path: Path,
    reads: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    made = snapshot(out)
    assert made is not None
    capsys.readouterr()
    reads.clear()
    rows_never_read(monkeypatch)
    before = out.read_bytes()
    assert run(tree, out) == 0
    err = capsys.readouterr().err
    assert "0 added, 0 replaced, 4 unchanged, 0 pruned" in err
    assert "2 skipped (1 binary, 1 not UTF-8)" in err
    assert "latin.txt: not UTF-8" in err  # said from the snapshot's message
    assert reads == []
    # A run that changed nothing wrote nothing: the file and its snapshot are as they were.
    assert out.read_bytes() == before
    assert not os.path.exists(f"{out}-wal") or os.path.getsize(f"{out}-wal") == 0
    assert snapshot(out) == made


def test_the_snapshot_holds_what_the_rows_hold(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    made = snapshot(out)
    assert made is not None
    quiet = {"binary"}
    from_snapshot = _core.RecordedFiles.from_snapshot(made[0], made[1], quiet)
    with SqliteRegistry(out, create=False) as store:
        from_rows = _core.RecordedFiles(store.document_states(), store.skipped_rows(), quiet)
    assert sorted(from_snapshot.unseen_documents()) == sorted(from_rows.unseen_documents())
    assert {os.path.basename(path) for path in from_snapshot.unseen_documents()} == {
        "a.txt",
        "12:3;4,5.txt",
        "line\nfeed.txt",
        "日本語 🦀.md",
    }
    assert sorted(from_snapshot.skip_rows()) == sorted(from_rows.skip_rows())
    assert from_snapshot.skip_count() == 2


def test_a_change_through_the_api_or_sqlite_deletes_the_snapshot(
    tree: Path,
    tmp_path: Path,
    reads: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    assert snapshot(out) is not None
    document = os.path.realpath(tree / "a.txt")
    with SqliteRegistry(out, create=False) as store:
        assert store.delete_document(document) > 0
    assert snapshot(out) is None
    capsys.readouterr()
    reads.clear()
    # The next run reads the rows, finds the document gone from the store, adds it again,
    # and writes a new snapshot.
    assert run(tree, out) == 0
    assert "1 added, 0 replaced, 3 unchanged" in store_line(capsys)
    assert reads == ["a.txt"]
    assert snapshot(out) is not None
    # Any program's change to a state: an updated size, a skipped file's record.
    for change in (
        "UPDATE documents SET file_size = file_size + 1",
        "DELETE FROM skipped_files",
        "UPDATE skipped_files SET message = 'another'",
    ):
        assert run(tree, out) == 0
        assert snapshot(out) is not None
        connection = sqlite3.connect(out)
        with connection:
            connection.execute(change)
        connection.close()
        assert snapshot(out) is None, change
    # Unrelated columns leave it alone.
    assert run(tree, out) == 0
    connection = sqlite3.connect(out)
    with connection:
        connection.execute("UPDATE documents SET digest = 'x'")
    connection.close()
    assert snapshot(out) is not None


def test_a_snapshot_that_does_not_read_is_replaced_and_never_trusted(
    tree: Path, tmp_path: Path, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    made = snapshot(out)
    assert made is not None
    connection = sqlite3.connect(out)
    with connection:
        # Cut short: the last document's row has no end.
        connection.execute("UPDATE file_states SET documents = ?", (made[0][:-1],))
    connection.close()
    capsys.readouterr()
    reads.clear()
    (tree / "a.txt").write_text("changed\n", encoding="utf-8")
    assert run(tree, out) == 0
    assert "0 added, 1 replaced, 3 unchanged" in store_line(capsys)
    assert reads == ["a.txt"]
    assert snapshot(out) not in (None, (made[0][:-1], made[1]))


# Paths as file systems allow them (no NUL), with the snapshot's punctuation likely.
paths = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\0")
    | st.sampled_from(":;,0123456789"),
    min_size=1,
    max_size=30,
)
integers = st.integers(min_value=-(2**63), max_value=2**63 - 1)
states = st.tuples(integers, integers, integers, integers)


@settings(max_examples=60, deadline=None)
@given(
    documents=st.dictionaries(paths, st.tuples(st.booleans(), st.none() | states), max_size=12),
    skipped=st.dictionaries(
        paths, st.tuples(st.sampled_from(["binary", "not UTF-8"]), paths, states), max_size=12
    ),
)
def test_any_rows_come_back_from_the_snapshot_sqlite_makes(
    documents: dict[str, tuple[bool, tuple[int, int, int, int] | None]],
    skipped: dict[str, tuple[str, str, tuple[int, int, int, int]]],
) -> None:
    connection = sqlite3.connect(":memory:")
    connection.executescript(SCHEMA)
    for document_id, (hashed, state) in documents.items():
        connection.execute(
            "INSERT INTO documents (document_id, content_hash, file_size, file_mtime_ns, "
            "file_ctime_ns, file_inode) VALUES (?, ?, ?, ?, ?, ?)",
            (document_id, "h" if hashed else None, *(state or (None,) * 4)),
        )
    skip_rows = [(path, kind, message, *state) for path, (kind, message, state) in skipped.items()]
    connection.executemany("INSERT INTO skipped_files VALUES (?, ?, ?, ?, ?, ?, ?)", skip_rows)
    connection.execute(WRITE_FILE_STATES)
    made = connection.execute("SELECT documents, skipped FROM file_states").fetchone()
    connection.close()
    recorded = _core.RecordedFiles.from_snapshot(made[0], made[1], set())
    assert sorted(recorded.unseen_documents()) == sorted(documents)
    assert sorted(recorded.skip_rows()) == sorted(skip_rows)


def test_a_snapshot_that_cannot_be_written_leaves_the_run_whole(
    tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(tree, out) == 0
    (tree / "new.txt").write_text("a new file\n", encoding="utf-8")
    # The write fails as SQLite fails (here: a statement it refuses); the run's documents are
    # committed, the run succeeds, and the next run reads the rows.
    monkeypatch.setattr(records, "WRITE_FILE_STATES", "INSERT INTO no_such_table VALUES (1)")
    capsys.readouterr()
    assert run(tree, out) == 0
    assert "1 added, 0 replaced, 4 unchanged" in store_line(capsys)
    assert snapshot(out) is None
    monkeypatch.undo()
    monkeypatch.setattr(cli_store, "RACY_SECONDS", -60)
    assert run(tree, out) == 0
    assert "0 added, 0 replaced, 5 unchanged" in store_line(capsys)
    assert snapshot(out) is not None
