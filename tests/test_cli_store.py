"""``spanchunk chunk ... -o FILE.sqlite``: the store output, incremental runs, and what a
crash leaves.

The store must hold what the API gives (``chunk_tree`` of each file, its path as the
document id), read back through ``SqliteRegistry``; re-runs skip unchanged files, replace
changed ones, add new ones and, with ``--prune``, remove those whose files are gone; a run
killed with SIGKILL leaves every document in its old or its new version.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import spanchunk
import spanchunk.ingest.pool as job
import spanchunk.ingest.statcache as cli_store
import spanchunk.stores.schema
from spanchunk import Chunk, Document, ParentChildChunker, SqliteRegistry
from spanchunk.cli import main
from spanchunk.stores.schema import SCHEMA_VERSION

PYTHON_DIR = Path(spanchunk.__file__).resolve().parent.parent
#: The README of the checkout these tests belong to (spanchunk itself may be installed).
README = Path(__file__).resolve().parent.parent / "README.md"
SIZES = ["--parent-size", "300", "--child-size", "60"]

TEXTS = {
    "a.txt": "Small chunks find, big chunks explain.\n\n" * 40,
    "b/c.md": '# Title\n\nIntro "quoted" \\ back\tslash.\n\n## Part\n\n' + "Body. " * 300,
    "b/d.txt": "émoji 🦀 and CJK 日本語, CRLF\r\nand NUL-free controls \x01\x1f.\n" * 60,
    "e.markdown": "\ufeff# BOM heading\n\ntext\n",
    "empty.txt": "",
    "sub/f.txt": "Sub folder text, one sentence after another. " * 30,
    "sub/g.md": "# G\n\n" + "Markdown under sub. " * 40,
}


def run(*args: str) -> int:
    return main(["chunk", *args])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    for name, text in TEXTS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def files_of(root: Path) -> list[Path]:
    """The files a run over ``root`` reads, in its order."""
    return sorted(
        (path for path in root.rglob("*") if path.is_file()),
        key=lambda path: path.relative_to(root).parts,
    )


def api_tree(path: Path, parent_size: int = 300, child_size: int = 60) -> list[Chunk]:
    """What the API gives for one file, its path (as the run names it) as the document id."""
    markdown = path.suffix in {".md", ".markdown"}
    chunker = ParentChildChunker(
        parent_size, child_size, parent_chunker="markdown" if markdown else None
    )
    text = path.read_bytes().decode("utf-8")
    name = os.path.realpath(path)
    return chunker.chunk_tree(Document(text, id=name, source=name))


def stored(out: Path) -> list[Chunk]:
    with SqliteRegistry(out) as store:
        return list(store)


def by_document(chunks: list[Chunk]) -> dict[str, list[Chunk]]:
    documents: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        documents.setdefault(chunk.document_id, []).append(chunk)
    return documents


def test_the_store_holds_what_the_api_gives(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    expected = [chunk for path in files_of(tree) for chunk in api_tree(path)]
    chunks = stored(out)
    assert chunks == expected  # every field, metadata (source, heading paths) included
    assert {0, 1} == {chunk.level for chunk in chunks}
    assert any(chunk.metadata.get("headings") for chunk in chunks)
    # Every chunk's text is its span of the file, in chars and in bytes.
    for chunk in chunks:
        text = Path(chunk.document_id).read_bytes().decode("utf-8")
        assert chunk.text == text[chunk.start_char : chunk.end_char]
        data = text.encode("utf-8")
        assert chunk.text.encode("utf-8") == data[chunk.start_byte : chunk.end_byte]
        assert chunk.metadata["source"] == chunk.document_id
    with SqliteRegistry(out) as store:
        leaf = next(chunk for chunk in chunks if chunk.level == 0)
        assert store.expand([leaf])[0].id == leaf.parent_id
        assert store.fingerprint == cli_store.run_fingerprint(
            spanchunk.cli.make_chunkers(spanchunk.cli.build_parser().parse_args(
                ["chunk", "x", *SIZES]
            ))
        )  # fmt: skip
        # Every file is a document, the empty one too (known, with no chunks).
        hashes = store.content_hashes()
        assert sorted(hashes) == sorted(os.path.realpath(p) for p in files_of(tree))
    assert sorted(os.listdir(tmp_path)) == ["in", "out.sqlite"]  # no temporary file left
    # The file is the store's own schema, indexes included, in WAL mode.
    SqliteRegistry(tmp_path / "api.sqlite").close()
    schemas = []
    for name in ("out.sqlite", "api.sqlite"):
        connection = sqlite3.connect(tmp_path / name)
        schemas.append(
            (
                connection.execute(
                    "SELECT type, name, sql FROM sqlite_master ORDER BY name"
                ).fetchall(),
                connection.execute("PRAGMA journal_mode").fetchone(),
                connection.execute("PRAGMA user_version").fetchone(),
                connection.execute("PRAGMA page_size").fetchone(),
            )
        )
        connection.close()
    assert schemas[0] == schemas[1]
    assert any(name == "chunks_position" for _, name, _ in schemas[0][0])


def test_text_format_records_the_api_chunkers_fingerprint(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree / "a.txt"), "--format", "text", *SIZES, "-o", str(out)) == 0
    chunker = ParentChildChunker(300, 60)
    with SqliteRegistry(out) as store:
        assert store.fingerprint == chunker.fingerprint()
        chunker = ParentChildChunker(300, 60, registry=store)
        chunker.chunk(Document("More text from the API. " * 30, id="api-doc"))  # accepted
        assert "api-doc" in store.document_ids()


def test_two_workers_store_what_one_stores(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(30):
        (tree / "many" / f"{number:02d}.txt").parent.mkdir(exist_ok=True)
        (tree / "many" / f"{number:02d}.txt").write_text(
            f"File {number}. " + "Words and more words. " * (20 + 7 * number), encoding="utf-8"
        )
    monkeypatch.setattr(job, "BATCH_FILES", 3)  # many batches, spread over the workers
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.sqlite"
        assert run(str(tree), "--workers", workers, *SIZES, "-o", str(out)) == 0
        with sqlite3.connect(out) as connection:
            outputs.append(connection.execute("SELECT rowid, * FROM chunks").fetchall())
        connection.close()
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 100


def summary_line(err: str) -> str:
    """The summary's store line of the one run whose stderr is ``err``."""
    (line,) = [line for line in err.splitlines() if "store:" in line]
    return line


def test_incremental_runs_add_replace_skip_and_prune(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    assert "7 added, 0 replaced, 0 unchanged, 0 pruned" in summary_line(capsys.readouterr().err)

    # Unchanged: nothing is cut again (the cutting function is never called).
    cut: list[str] = []
    real_cut = cli_store._core.cut_for_store

    def counted_cut(levels: Any, datas: list[bytes], *args: Any) -> Any:
        cut.extend(data.decode() for data in datas)
        return real_cut(levels, datas, *args)

    monkeypatch.setattr(cli_store._core, "cut_for_store", counted_cut)
    before = stored(out)
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "0 added, 0 replaced, 7 unchanged, 0 pruned" in summary_line(err)
    assert "7 documents, 0 parents, 0 children" in err
    assert cut == []
    assert stored(out) == before

    # One changed, one new, one gone: without --prune the gone one is kept and counted.
    (tree / "a.txt").write_text("A new text for a. " * 50, encoding="utf-8")
    (tree / "sub" / "new.txt").write_text("A new file. " * 40, encoding="utf-8")
    (tree / "b" / "d.txt").unlink()
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    line = summary_line(capsys.readouterr().err)
    assert "1 added, 1 replaced, 5 unchanged, 0 pruned" in line
    assert "1 whose files are gone kept (add --prune to remove them)" in line
    assert len(cut) == 2
    documents = by_document(stored(out))
    assert os.path.realpath(tree / "b" / "d.txt") in documents
    assert documents[os.path.realpath(tree / "a.txt")] == api_tree(tree / "a.txt")

    assert run(str(tree), *SIZES, "-o", str(out), "--prune") == 0
    assert "0 added, 0 replaced, 7 unchanged, 1 pruned" in summary_line(capsys.readouterr().err)
    # The store now holds what a first run over the folder as it is gives, document by
    # document (the order of rows differs: replaced documents were written last).
    fresh = tmp_path / "fresh.sqlite"
    assert run(str(tree), *SIZES, "-o", str(fresh)) == 0
    assert by_document(stored(out)) == by_document(stored(fresh))
    with SqliteRegistry(out) as store, SqliteRegistry(fresh) as other:
        assert store.content_hashes() == other.content_hashes()


def test_prune_removes_only_what_the_run_covers(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    capsys.readouterr()
    for name in ("a.txt", "sub/f.txt", "sub/g.md"):
        (tree / name).unlink()
    name = os.path.realpath

    # Over a subfolder, with a glob: only the Markdown file under sub/ goes.
    assert run(str(tree / "sub"), "-g", "*.md", *SIZES, "-o", str(out), "--prune") == 0
    assert "1 pruned" in summary_line(capsys.readouterr().err)
    documents = set(by_document(stored(out)))
    assert name(str(tree / "sub" / "g.md")) not in documents
    assert {name(str(tree / "sub" / "f.txt")), name(str(tree / "a.txt"))} <= documents

    # A file named on the command line that is gone: kept by --prune (a PATH that does not
    # exist may be a moved folder or an unmounted disk; the run says so and fails) ...
    assert run(str(tree / "a.txt"), *SIZES, "-o", str(out), "--prune") == 1
    err = capsys.readouterr().err
    assert "0 pruned" in summary_line(err) and "1 PATH not found" in err
    assert "1 under a PATH or folder that could not be read kept" in err
    assert name(str(tree / "a.txt")) in set(by_document(stored(out)))
    # ... and removed by the explicit --prune=all (the run succeeds: it found it stored).
    assert run(str(tree / "a.txt"), *SIZES, "-o", str(out), "--prune=all") == 0
    err = capsys.readouterr().err
    assert "1 pruned" in summary_line(err) and "skipped" in err
    assert name(str(tree / "a.txt")) not in set(by_document(stored(out)))

    # The whole folder, spelt another way (a trailing "/."): the same documents.
    assert run(f"{tree}/.", *SIZES, "-o", str(out), "--prune") == 0
    assert "0 added, 0 replaced, 4 unchanged, 1 pruned" in summary_line(capsys.readouterr().err)


def test_excluded_folders_are_not_pruned(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    assert run(str(tree), "--exclude", "sub", *SIZES, "-o", str(out), "--prune") == 0
    documents = set(by_document(stored(out)))
    assert os.path.realpath(tree / "sub" / "f.txt") in documents  # excluded, not gone


def test_a_full_disk_fails_cleanly(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    # A new store (filled by the core's SQLite) that may not grow past a few pages: SQLite's
    # own "database or disk is full".
    monkeypatch.setattr(
        spanchunk.stores.schema,
        "BULK_LOAD_SETUP",
        spanchunk.stores.schema.BULK_LOAD_SETUP + "PRAGMA max_page_count = 8;",
    )
    assert run(str(tree), "-o", str(out_dir / "o.sqlite")) == 1
    err = capsys.readouterr().err
    assert "cannot write the output" in err and "No space left on device" in err
    assert "Traceback" not in err
    assert list(out_dir.iterdir()) == []  # no temporary file left
    monkeypatch.undo()

    # An existing store, updated through Python's sqlite3.
    out = out_dir / "o.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    before = stored(out)
    (tree / "a.txt").write_text("Changed. " * 80, encoding="utf-8")

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SqliteRegistry, "replace_documents", full)
    capsys.readouterr()
    assert run(str(tree), *SIZES, "-o", str(out)) == 1
    err = capsys.readouterr().err
    assert "cannot write the output" in err and "No space left on device" in err
    assert "Traceback" not in err
    assert stored(out) == before
    assert sorted(os.listdir(out_dir)) == ["o.sqlite"]


def test_other_settings_are_refused_and_the_store_kept(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    capsys.readouterr()
    before = stored(out)
    (tree / "a.txt").write_text("Changed. " * 80, encoding="utf-8")
    assert run(str(tree), "--parent-size", "300", "--child-size", "50", "-o", str(out)) == 2
    err = capsys.readouterr().err
    assert "other settings" in err and "new store" in err and f"remove {out}" in err
    # Each setting that differs, with both values, and the options that fix it.
    assert "--child-size: the store has 60, this run 50" in err
    assert "run with the store's (--child-size 60)" in err
    assert "usage:" not in err
    assert stored(out) == before


def test_a_store_of_one_format_names_the_flag_that_updates_it(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), "--format", "text", *SIZES, "-o", str(out)) == 0
    assert run(str(tree), *SIZES, "-o", str(out)) == 2
    assert "--format: the store has text, this run auto" in capsys.readouterr().err
    assert run(str(tree), "--format", "text", *SIZES, "-o", str(out)) == 0
    assert "7 unchanged" in summary_line(capsys.readouterr().err)


def test_an_interrupted_incremental_run_leaves_old_or_new_documents(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    old = by_document(stored(out))
    files = [path for path in files_of(tree) if path.stat().st_size]
    for path in files:
        path.write_text("Second version of the file. " * 40, encoding="utf-8")
    monkeypatch.setattr(job, "BATCH_FILES", 2)
    real_call = cli_store.StoreJob.__call__
    calls: list[int] = []

    def interrupted_at_the_third_batch(self: cli_store.StoreJob, batch: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_call(self, batch)

    monkeypatch.setattr(cli_store.StoreJob, "__call__", interrupted_at_the_third_batch)
    assert run(str(tree), "--workers", "1", *SIZES, "-o", str(out)) == 130
    got = by_document(stored(out))
    names = [os.path.realpath(path) for path in files]
    new = {name: api_tree(path) for name, path in zip(names, files, strict=True)}
    # Two batches of two files went in (the third batch holds the empty file, unchanged);
    # the rest are as they were.
    written = [name for name in names if got[name] == new[name]]
    assert written == names[:4]
    assert all(got[name] == old[name] for name in names[4:])
    assert sorted(os.listdir(tmp_path)) == ["in", "out.sqlite"]


def test_what_cannot_be_a_store_is_refused_and_kept(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database at all, " * 100, encoding="utf-8")
    for target in (other, text):
        before = target.read_bytes()
        assert run(str(tree), "-o", str(target)) == 2
        assert target.read_bytes() == before
    assert run(str(tree), "--prune", "-o", str(tmp_path / "x.jsonl")) == 2


def test_a_failed_first_run_leaves_no_file(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "x.bin").write_bytes(b"\0\1\2")
    assert run(str(binary), "-o", str(out_dir / "o.sqlite")) == 1  # nothing to chunk
    assert list(out_dir.iterdir()) == []

    def interrupted(self: object, batch: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_store.StoreJob, "__call__", interrupted)
    for workers in ("1", "2"):
        assert run(str(tree), "--workers", workers, "-o", str(out_dir / "o.sqlite")) == 130
        assert list(out_dir.iterdir()) == []


def test_a_changed_file_that_fails_keeps_its_old_version(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    capsys.readouterr()
    before = by_document(stored(out))
    (tree / "a.txt").write_bytes(b"now \xff not UTF-8")
    assert run(str(tree), *SIZES, "-o", str(out), "--prune") == 0
    err = capsys.readouterr().err
    assert "a.txt: not UTF-8 (byte 0xff at offset 4)" in err
    assert "0 added, 0 replaced, 6 unchanged, 0 pruned" in summary_line(err)
    assert by_document(stored(out)) == before


def test_a_store_of_another_schema_is_refused(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out.sqlite"
    assert run(str(tree), *SIZES, "-o", str(out)) == 0
    before = stored(out)
    connection = sqlite3.connect(out)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 4}")
    connection.commit()
    connection.close()
    capsys.readouterr()
    assert run(str(tree), *SIZES, "-o", str(out)) == 2
    err = capsys.readouterr().err
    assert f"store of schema {SCHEMA_VERSION + 4}" in err and "into a new store" in err
    connection = sqlite3.connect(out)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    connection.commit()
    connection.close()
    assert by_document(stored(out)) == by_document(before)


# --------------------------------------------------------------------------------------------
# SIGKILL: a real process killed inside a transaction.

KILLED_RUN = """
import os, sys, time
import spanchunk.stores.schema
import spanchunk.ingest.pool as pool
import spanchunk.stores.records as records
from spanchunk.cli import main
from spanchunk.ingest.store_sink import StoreSink

pool.BATCH_FILES = 2  # a transaction every two files
kill_at = int(sys.argv[1])
real_replace = records.replace_rows
real_write = StoreSink.write
state = {"documents": 0, "batches": 0}

def inside():
    print("inside", flush=True)
    time.sleep(60)

def replace(connection, document_id, rows, digest, content_hash, **flags):
    # An existing store: inside a batch's transaction.
    real_replace(connection, document_id, rows, digest, content_hash, **flags)
    state["documents"] += 1
    if state["documents"] == kill_at:  # the first document of a batch, written, uncommitted
        inside()

def write(self, written, sources, document_ids):
    # A new store: once batches are in its temporary file.
    real_write(self, written, sources, document_ids)
    state["batches"] += 1
    if self._bulk is not None and state["batches"] == kill_at // 2:
        inside()

records.replace_rows = replace
StoreSink.write = write
sys.exit(main(["chunk", *sys.argv[2:]]))
"""


def start_killed_run(kill_at: int, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(kill_at), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def kill_when_inside(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None and process.stderr is not None
    line = process.stdout.readline()
    if line != "inside\n":
        process.wait(timeout=60)
        raise AssertionError(f"the run ended before the kill: {process.stderr.read()}")
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    process.stdout.close()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_run_killed_mid_write_leaves_old_or_new_documents(
    tree: Path, tmp_path: Path, workers: str
) -> None:
    texts = {f"k/{number:02d}.txt": f"Version one of {number}. " * 90 for number in range(12)}
    for name, text in texts.items():
        (tree / name).parent.mkdir(exist_ok=True)
        (tree / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out.sqlite"
    args = [str(tree), "--workers", workers, *SIZES, "-o", str(out)]

    # A first run killed: nothing under the final name.
    kill_when_inside(start_killed_run(5, *args))
    assert not out.exists()

    assert run(*args) == 0
    old = by_document(stored(out))
    files = files_of(tree)
    for path in files:
        if path.stat().st_size:
            path.write_text("Version two, longer. " * 120, encoding="utf-8")
    new = {os.path.realpath(path): api_tree(path) for path in files}
    # Killed inside the third batch's transaction: two batches (four files) committed.
    kill_when_inside(start_killed_run(5, *args))
    with SqliteRegistry(out) as store:
        documents = by_document(list(store))
        hashes = store.content_hashes()
    assert set(hashes) == {os.path.realpath(path) for path in files}
    versions = []
    for path in files:
        name = os.path.realpath(path)
        got = documents.get(name, [])
        if got == new[name] and got != old.get(name, []):
            versions.append("new")
        else:
            assert got == old.get(name, []), name  # never a mix, never missing
            versions.append("old")
    assert versions.count("new") == 4, versions
    assert versions[:4] == ["new"] * 4

    # The next run finishes the job.
    assert run(*args) == 0
    assert by_document(stored(out)) == {name: chunks for name, chunks in new.items() if chunks}


def test_the_docs_store_example_runs(tmp_path: Path) -> None:
    page = (README.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    start = page.index("<!-- store example -->")
    block = page[start:].split("```sh\n", 1)[1].split("```", 1)[0]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "intro.md").write_text("# Intro\n\n" + "Some text. " * 400, encoding="utf-8")
    (docs / "old.txt").write_text("To be deleted. " * 100, encoding="utf-8")
    script = textwrap.dedent(
        f"""\
        set -e
        spanchunk() {{ "{sys.executable}" -m spanchunk "$@"; }}
        {block}
        """
    )
    env: dict[str, Any] = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), *sys.path]),
    }
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    # What the example's comment says.
    counts = block.splitlines()[-1].split("# ")[1]
    assert counts == "1 added, 0 replaced, 1 unchanged, 1 pruned"
    assert counts in summary_line(result.stderr.split("spanchunk: 2 documents")[-1])
    with SqliteRegistry(tmp_path / "store.sqlite") as store:
        assert store.document_ids() == [
            os.path.realpath(tmp_path / "docs" / name) for name in ("intro.md", "new.md")
        ]
