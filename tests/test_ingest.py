"""``spanchunk.ingest``: ``sync`` from Python, one reading path and one id for every output,
and the names and folders a run must survive (each a regression test of a run that failed).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from spanchunk import HierarchicalChunker, ParentChildChunker, SqliteRegistry
from spanchunk.cli import main
from spanchunk.ingest import FileChunkers, SyncReport, document_id, read_document, sync

SIZES = ("--parent-size", "300", "--child-size", "60")


#: As root, permissions bind a process only without these capabilities (setpriv, of
#: util-linux, drops them for the command it runs).
WITHOUT_ROOT_PRIVILEGES = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def cli(*args: str, unprivileged: bool = False) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own (``unprivileged``: bound by permissions,
    even as root)."""
    prefix = WITHOUT_ROOT_PRIVILEGES if unprivileged and os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "spanchunk", *args],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("Plain text here. " * 40, encoding="utf-8")
    (root / "b.md").write_text("# Title\n\nSome words.\n\n## Part\n\nMore words. " * 10)
    (root / "sub" / "c.py").write_text(
        "class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    return [1, 2, 3]\n" * 8
    )
    (root / "sub" / "D.java").write_text(
        "class D {\n  int f() { return 1; }\n  int g() { return 2; }\n}\n" * 10
    )
    (root / "image.bin").write_bytes(b"\x89PNG\x00" + bytes(200))
    return root


def jsonl_ids(path: Path, *args: str) -> dict[str, list[str]]:
    """The chunk ids of each document in the command line's JSON Lines output."""
    out = path.parent.parent / f"{path.name}.{abs(hash(args))}.jsonl"
    assert main(["chunk", str(path), *SIZES, *args, "-o", str(out)]) == 0
    ids: dict[str, list[str]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        ids.setdefault(record["document_id"], []).append(record["id"])
    out.unlink()
    return ids


def output_ids(path: Path, suffix: str, *args: str) -> dict[str, set[str]]:
    """The chunk ids of each document in the command line's Parquet or store output."""
    out = path.parent.parent / f"{path.name}.{abs(hash(args))}{suffix}"
    assert main(["chunk", str(path), *SIZES, *args, "-o", str(out)]) == 0
    ids: dict[str, set[str]] = {}
    if suffix == ".sqlite":
        ids = stored_ids(out)
    else:
        import pyarrow.parquet as pq  # noqa: PLC0415

        for row in pq.read_table(out, columns=["document_id", "id"]).to_pylist():
            ids.setdefault(row["document_id"], set()).add(row["id"])
    out.unlink()
    return ids


@pytest.mark.parametrize(
    ("name", "args", "chunker"),
    [
        ("a.txt", (), ParentChildChunker(300, 60)),
        ("a.txt", ("--format", "text"), ParentChildChunker(300, 60)),
        ("b.md", (), ParentChildChunker(300, 60, parent_chunker="markdown")),
        ("b.md", ("--format", "markdown"), ParentChildChunker(300, 60, parent_chunker="markdown")),
        ("sub/c.py", (), ParentChildChunker(300, 60)),
        ("sub/c.py", ("--format", "code"), ParentChildChunker(300, 60, parent_chunker="code")),
        ("sub/D.java", ("--format", "code"), ParentChildChunker(300, 60, parent_chunker="code")),
        (
            "sub/D.java",
            ("--format", "code", "--language", "java"),
            ParentChildChunker(300, 60, parent_chunker="code", language="java"),
        ),
    ],
)
def test_the_api_gives_the_command_line_ids_for_every_format(
    tree: Path, name: str, args: tuple[str, ...], chunker: ParentChildChunker
) -> None:
    path = tree / name
    expected = jsonl_ids(path, *args)
    document = read_document(path)
    assert document.id == document_id(path) == os.path.realpath(path)
    tree_chunks = chunker.chunk_tree(document)
    assert expected == {document.id: [chunk.id for chunk in tree_chunks]}
    as_sets = {document.id: {chunk.id for chunk in tree_chunks}}
    assert output_ids(path, ".parquet", *args) == as_sets
    assert output_ids(path, ".sqlite", *args) == as_sets
    report = sync(path, path.parent.parent / "api.sqlite", chunker)
    assert report.added == 1
    assert stored_ids(path.parent.parent / "api.sqlite") == as_sets


def test_code_parents_follow_the_language_of_the_file_name(tree: Path) -> None:
    chunker = ParentChildChunker(300, 60, parent_chunker="code")
    java = chunker.chunk_tree(read_document(tree / "sub" / "D.java"))
    assert {chunk.metadata["language"] for chunk in java} == {"java"}


def stored_ids(store: Path) -> dict[str, set[str]]:
    with SqliteRegistry.open(store) as opened:
        found: dict[str, set[str]] = {}
        for chunk in opened:
            found.setdefault(chunk.document_id, set()).add(chunk.id)
    return found


def test_sync_keeps_a_store_in_step_with_a_folder(tree: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    chunker = ParentChildChunker(300, 60)
    first = sync(tree, store, chunker)
    assert isinstance(first, SyncReport)
    assert (first.added, first.replaced, first.unchanged, first.pruned) == (4, 0, 0, 0)
    assert first.skipped == {"binary": 1}
    assert first.skips == [(str(tree / "image.bin"), "binary", first.skips[0][2])]
    assert len(stored_ids(store)) == 4
    # The command line into the same store sees it as its own: nothing to do.
    assert main(["chunk", str(tree), *SIZES, "--format", "text", "-o", str(store)]) == 0
    (tree / "a.txt").write_text("Changed text. " * 50, encoding="utf-8")
    (tree / "new.txt").write_text("A new file. " * 30, encoding="utf-8")
    (tree / "b.md").unlink()
    second = sync([str(tree)], store, chunker)
    assert (second.added, second.replaced, second.unchanged, second.gone) == (1, 1, 2, 1)
    assert str(os.path.realpath(tree / "b.md")) in stored_ids(store)
    third = sync(tree, store, chunker, prune=True)
    assert (third.pruned, third.unchanged) == (1, 4)
    assert str(os.path.realpath(tree / "b.md")) not in stored_ids(store)
    # Every document's chunks are what the chunker gives its file.
    for document, ids in stored_ids(store).items():
        assert ids == {chunk.id for chunk in chunker.chunk_tree(read_document(document))}


def test_sync_into_an_open_store_and_with_file_chunkers(tree: Path, tmp_path: Path) -> None:
    text = HierarchicalChunker([400, 100, 40])
    markdown = HierarchicalChunker([400, 100, 40], chunkers=["markdown", None, None])
    chunkers = FileChunkers(text, markdown, "auto")
    with SqliteRegistry(tmp_path / "open.sqlite", children=True) as opened:
        report = sync(tree, opened, chunkers, include=["*.md", "*.txt"])
        assert report.added == 2 and opened.document_ids()  # still open, and filled
        levels = {chunk.level for chunk in opened}
    assert levels == {0, 1, 2}
    assert set(stored_ids(tmp_path / "open.sqlite")) == {
        os.path.realpath(tree / "a.txt"),
        os.path.realpath(tree / "b.md"),
    }


def test_sync_refuses_what_cannot_work(tree: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    from spanchunk import RecursiveChunker  # noqa: PLC0415

    with pytest.raises(TypeError, match="ParentChildChunker or HierarchicalChunker"):
        sync(tree, store, RecursiveChunker(100))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prune must be False, True or 'all'"):
        sync(tree, store, ParentChildChunker(300, 60), prune="yes")
    sync(tree, store, ParentChildChunker(300, 60))
    with pytest.raises(ValueError, match="other settings"):
        sync(tree, store, ParentChildChunker(500, 60))
    made_by_the_command_line = tmp_path / "cli.sqlite"
    assert main(["chunk", str(tree), *SIZES, "-o", str(made_by_the_command_line)]) == 0
    with pytest.raises(ValueError, match="filled by the command line with --child-size 60"):
        sync(tree, made_by_the_command_line, ParentChildChunker(300, 60))
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_a_name_that_is_not_utf8_is_skipped_and_said_never_a_traceback(
    tree: Path, tmp_path: Path
) -> None:
    bad = os.path.join(os.fsencode(tree), b"caf\xe9.txt")
    with open(bad, "wb") as handle:
        handle.write(b"text in a file whose name is latin-1\n" * 20)
    escaped = str(tree / "caf\\xe9.txt")
    for output in ("out.jsonl", "out.parquet", "out.sqlite"):
        result = cli("chunk", str(tree), *SIZES, "-o", str(tmp_path / output))
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert f"skipped {escaped}: its name is not valid UTF-8" in result.stderr
        assert "1 name not UTF-8" in result.stderr
    dry = cli("chunk", str(tree), *SIZES, "-o", str(tmp_path / "out.sqlite"), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"skip      {escaped}  (its name is not valid UTF-8" in dry.stdout
    report = sync(tree, tmp_path / "api.sqlite", ParentChildChunker(300, 60))
    assert report.skipped["name not UTF-8"] == 1


def test_dry_run_shows_each_name_on_one_line_and_paths_alike(tree: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    (tree / "two\nlines.txt").write_text("A name with a newline. " * 10, encoding="utf-8")
    assert main(["chunk", str(tree), *SIZES, "-o", str(store)]) == 0
    (tree / "a.txt").unlink()
    result = subprocess.run(
        [sys.executable, "-m", "spanchunk", "chunk", "in", *SIZES, "-o", str(store), "-n"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    lines = result.stdout.splitlines()
    assert "unchanged in/two\\nlines.txt" in lines
    assert "gone      in/a.txt" in lines  # relative, as the listed files are


def test_an_unreadable_folder_and_a_missing_path_keep_their_documents(tmp_path: Path) -> None:
    # As root a folder is never unreadable: the runs go without root's privileges.
    work = tmp_path / "work"
    work.mkdir()
    tree = work / "tree"
    (tree / "secret").mkdir(parents=True)
    (tree / "open.txt").write_text("Open text. " * 30, encoding="utf-8")
    (tree / "secret" / "s.txt").write_text("Secret text. " * 30, encoding="utf-8")
    store = work / "s.sqlite"
    first = cli("chunk", str(tree), *SIZES, "-o", str(store), unprivileged=True)
    assert first.returncode == 0, first.stderr
    secret = os.path.realpath(tree / "secret" / "s.txt")
    (tree / "secret").chmod(0o000)
    try:
        run = cli("chunk", str(tree), *SIZES, "-o", str(store), "--prune", unprivileged=True)
        assert run.returncode == 0, run.stderr
        assert "0 pruned" in run.stderr
        assert "1 under a PATH or folder that could not be read kept" in run.stderr
        assert secret in stored_ids(store)
        dry = cli("chunk", str(tree), *SIZES, "-o", str(store), "--prune", "-n", unprivileged=True)
        assert "keep" in dry.stdout and "prune " not in dry.stdout
    finally:
        (tree / "secret").chmod(0o755)
    # A PATH that no longer exists (a moved folder): kept, said, and the run fails.
    shutil.move(str(tree), str(work / "moved"))
    gone = cli("chunk", str(tree), *SIZES, "-o", str(store), "--prune", unprivileged=True)
    assert gone.returncode == 1
    assert "1 PATH not found" in gone.stderr and "2 under a PATH or folder" in gone.stderr
    assert len(stored_ids(store)) == 2
    # Pruning what is truly gone is the explicit --prune=all.
    pruned = cli("chunk", str(tree), *SIZES, "-o", str(store), "--prune=all", unprivileged=True)
    assert "2 pruned" in pruned.stderr
    assert stored_ids(store) == {}


def test_the_lock_wait_is_said_and_bounded(tree: Path, tmp_path: Path) -> None:
    import fcntl  # noqa: PLC0415

    store = tmp_path / "s.sqlite"
    lock = tmp_path / ".s.sqlite.lock"
    with open(lock, "w") as holder:
        holder.write("12345\n")
        holder.flush()
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        result = cli("chunk", str(tree), "-o", str(store), "--lock-timeout", "0.3")
        with pytest.raises(TimeoutError, match="lock_timeout"):
            sync(tree, store, ParentChildChunker(300, 60), lock_timeout=0.2)
    assert result.returncode == 1
    assert "waiting for another run writing" in result.stderr and "(pid 12345)" in result.stderr
    assert "held it for more than 0.3 s" in result.stderr and "--lock-timeout" in result.stderr
    assert not store.exists()


def test_info_is_quiet_on_a_closed_pipe_and_clear_on_a_store_being_made(
    tree: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.sqlite"
    assert main(["chunk", str(tree), "-o", str(store)]) == 0
    piped = subprocess.run(
        f"{sys.executable} -m spanchunk info {store} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.stdout.startswith("store:") and piped.stderr == ""
    (tmp_path / ".new.sqlite.lock").write_text("1\n")
    made = cli("info", str(tmp_path / "new.sqlite"))
    assert made.returncode == 1
    assert "being made by a run that has not finished" in made.stderr


def test_an_option_named_in_a_message_is_spelled_once(tree: Path) -> None:
    result = cli("chunk", str(tree), "--encoding", "gpt4")
    assert result.returncode == 2
    assert "spanchunk: error: --encoding applies to token units only: add --unit token" in (
        result.stderr
    )


def test_an_unchanged_rerun_does_not_claim_a_speed_for_what_it_did_not_read(
    tree: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.sqlite"
    assert cli("chunk", str(tree), "-o", str(store)).returncode == 0
    again = cli("chunk", str(tree), "-o", str(store))
    first_line = again.stderr.splitlines()[0]
    assert "MB unchanged, in" in first_line and "MB/s" not in first_line


def test_a_store_is_schema_1_and_its_tables_read_with_plain_sql(tree: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    assert main(["chunk", str(tree), "-o", str(store)]) == 0
    with sqlite3.connect(store) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        rows: list[Any] = connection.execute(
            "SELECT document_id, count(*) FROM chunks GROUP BY document_id"
        ).fetchall()
    connection.close()
    assert {os.path.basename(row[0]) for row in rows} == {"a.txt", "b.md", "c.py", "D.java"}


@pytest.mark.parametrize(
    "module",
    [
        "spanchunk.ingest",
        "spanchunk.ingest.files",
        "spanchunk.ingest.reading",
        "spanchunk.ingest.sync",
        "spanchunk.stores.info",
    ],
)
def test_docstring_examples(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest  # noqa: PLC0415
    import importlib  # noqa: PLC0415

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried and not failures


def test_a_stored_file_that_turned_binary_keeps_its_version_and_is_said(
    tree: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.sqlite"
    text = ("--format", "text")
    assert cli("chunk", str(tree), *SIZES, *text, "-o", str(store)).returncode == 0
    before = stored_ids(store)[os.path.realpath(tree / "a.txt")]
    (tree / "a.txt").write_bytes(b"now binary\x00" * 10)
    again = cli("chunk", str(tree), *SIZES, *text, "-o", str(store))
    assert again.returncode == 0
    assert "1 whose files were skipped this time keep their last version" in again.stderr
    assert stored_ids(store)[os.path.realpath(tree / "a.txt")] == before
    report = sync(tree, store, ParentChildChunker(300, 60))
    assert report.stale == 1


def test_the_command_line_cuts_n_levels_as_the_api(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "three.jsonl"
    sizes = ("--sizes", "400,120,40")
    assert main(["chunk", str(tree / "b.md"), *sizes, "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {record["level"] for record in records} == {0, 1, 2}
    chunker = HierarchicalChunker([400, 120, 40], chunkers=["markdown", None, None])
    expected = chunker.chunk_tree(read_document(tree / "b.md"))
    assert [record["id"] for record in records] == [chunk.id for chunk in expected]
    store = tmp_path / "three.sqlite"
    assert main(["chunk", str(tree), *sizes, "-o", str(store)]) == 0
    info = cli("info", str(store))
    assert "--sizes 400,120,40" in info.stdout and "level 2:" in info.stdout
    other = cli("chunk", str(tree), "--sizes", "400,100,40", "-o", str(store))
    assert other.returncode == 2
    assert "--sizes: the store has 400,120,40, this run 400,100,40" in other.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--sizes", "400,100", "--parent-size", "300"), "drop --parent-size"),
        (("--sizes", "400,100", "--child-unit", "token"), "--child-unit applies to two levels"),
        (("--sizes", "400,100", "--merge", "greedy"), "--merge greedy applies to two levels"),
        (("--sizes", "400,100", "--overlap", "100"), "--overlap must be smaller"),
        (("--sizes", "100,400"), "--sizes"),
        (("--sizes", "400"), "two sizes or more"),
    ],
)
def test_sizes_that_cannot_work_are_refused(
    tree: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("chunk", str(tree), *args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_folder_links_and_loops_are_counted_and_listed_with_verbose(
    tree: Path, tmp_path: Path
) -> None:
    (tree / "sub" / "up").symlink_to(tree)  # a loop, were links followed
    (tree / "elsewhere").symlink_to(tree / "sub")
    out = tmp_path / "out.jsonl"
    quiet = cli("chunk", str(tree), "-o", str(out))
    assert quiet.returncode == 0
    assert "2 folder link" in quiet.stderr and "not followed" not in quiet.stderr
    said = cli("chunk", str(tree), "-o", str(out), "--verbose")
    assert f"skipped {tree / 'elsewhere'}: a link to a folder, not followed" in said.stderr
    assert f"skipped {tree / 'sub' / 'up'}: a link to a folder" in said.stderr
    report = sync(tree, tmp_path / "s.sqlite", ParentChildChunker(300, 60))
    assert report.skipped["folder link"] == 2


def test_sync_of_mistyped_paths_creates_no_store(tree: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with pytest.raises(FileNotFoundError, match="nothing was written"):
        sync(tree.parent / "nowhere", store, ParentChildChunker(300, 60))
    assert not store.exists()
    report = sync([tree, tree.parent / "nowhere"], store, ParentChildChunker(300, 60))
    assert report.missing == [str(tree.parent / "nowhere")] and report.added == 4
