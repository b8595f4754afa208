"""The job is safe on real folders: ordinary mistakes lose nothing, and it says what it does.

Each test is a mistake a user makes (an output over its input, a symlink or a FIFO as output,
an output inside the folder being chunked, two runs at once, a full disk, a killed run, a
store updated from another folder), run as a real process where the behaviour is the
process's (exit status, stdout, signals), with real files, links, FIFOs and file systems.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from spanchunk import ParentChildChunker, SqliteRegistry
from spanchunk.ingest import document_id, read_document

SIZES = ["--parent-size", "300", "--child-size", "60"]


def cli(
    *args: str, cwd: Path | None = None, stdin: bytes | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """``spanchunk ARGS`` as a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "spanchunk", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A small folder: two Markdown files, a text file, a binary."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "intro.md").write_text("# Intro\n\n" + "Small chunks find. " * 60, encoding="utf-8")
    (root / "guide.md").write_text("# Guide\n\n" + "Big chunks explain. " * 50, encoding="utf-8")
    (root / "notes.txt").write_text("Plain notes, line by line.\n" * 40, encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    return root


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stored_ids(path: Path) -> list[str]:
    with SqliteRegistry.open(path) as store:
        return [chunk.id for chunk in store]


# --------------------------------------------------------------------------------------------
# Outputs that are not plain new files.


def test_dev_stdout_is_streamed_and_never_replaced(docs: Path, tmp_path: Path) -> None:
    assert os.path.islink("/dev/stdout")
    script = (
        f"{sys.executable!s} -m spanchunk chunk {docs / 'notes.txt'} {docs / 'intro.md'} "
        "-o /dev/stdout | head -n 1"
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, check=False)
    assert json.loads(result.stdout)["source"].endswith("notes.txt")
    assert os.path.islink("/dev/stdout")  # not replaced by a regular file
    # Redirected to a file by the shell: the records land in it.
    out = tmp_path / "redirected.jsonl"
    with out.open("wb") as handle:
        ran = subprocess.run(
            [sys.executable, "-m", "spanchunk", "chunk", str(docs), "-o", "/dev/stdout"],
            stdout=handle,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert ran.returncode == 0
    assert len(records(out)) > 4


def test_a_symlink_output_is_written_through(docs: Path, tmp_path: Path) -> None:
    target = tmp_path / "real" / "chunks.jsonl"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert cli("chunk", str(docs), "-o", str(link)).returncode == 0
    assert link.is_symlink() and link.resolve() == target
    assert len(records(target)) > 4
    # No temporary file left beside the link or the target.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "link.jsonl", "real"]
    assert [p.name for p in target.parent.iterdir()] == ["chunks.jsonl"]
    # A dangling link: its target is created.
    dangling = tmp_path / "dangling.parquet"
    dangling.symlink_to(tmp_path / "real" / "new.parquet")
    assert cli("chunk", str(docs), "-o", str(dangling)).returncode == 0
    assert dangling.is_symlink() and (tmp_path / "real" / "new.parquet").stat().st_size > 0


def test_a_fifo_output_is_streamed_to_its_reader(docs: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "chunks.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = cli("chunk", str(docs), "-o", str(fifo))
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert fifo.is_fifo()
    expected = cli("chunk", str(docs), "-o", "-").stdout
    assert received == [expected] and expected


def test_dev_null_and_folder_outputs(docs: Path, tmp_path: Path) -> None:
    assert cli("chunk", str(docs), "-o", "/dev/null").returncode == 0
    assert Path("/dev/null").is_char_device()
    result = cli("chunk", str(docs), "-o", str(tmp_path))
    assert result.returncode == 2
    assert b"is a folder" in result.stderr and b"usage:" not in result.stderr
    # A store must be a regular file: a FIFO named .sqlite is refused, and kept.
    fifo = tmp_path / "s.sqlite"
    os.mkfifo(fifo)
    stream = cli("chunk", str(docs), "-o", str(fifo))
    assert stream.returncode == 2 and b"regular file" in stream.stderr
    assert fifo.is_fifo()


def test_unknown_output_kinds_are_refused(docs: Path, tmp_path: Path) -> None:
    for name in ("out.csv", "out", "notes.md", "out.jsonl.zst"):
        result = cli("chunk", str(docs), "-o", str(tmp_path / name))
        assert result.returncode == 2, name
        said = b"not built in" if name.endswith(".zst") else b".parquet"
        assert b".jsonl" in result.stderr and said in result.stderr
        assert not (tmp_path / name).exists()


def test_jsonl_gz_is_gzip(docs: Path, tmp_path: Path) -> None:
    plain, packed = tmp_path / "c.jsonl", tmp_path / "c.jsonl.gz"
    assert cli("chunk", str(docs), "-o", str(plain)).returncode == 0
    assert cli("chunk", str(docs), "-o", str(packed)).returncode == 0
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()


# --------------------------------------------------------------------------------------------
# Outputs and inputs.


def test_an_output_that_is_an_input_is_refused(docs: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"a": 1}\n', encoding="utf-8")
    before = notes.read_bytes()
    link = tmp_path / "alias.jsonl"
    link.symlink_to(notes)
    hard = tmp_path / "hard.jsonl"
    os.link(notes, hard)
    for given, output in (
        ("notes.jsonl", "notes.jsonl"),
        ("notes.jsonl", "./notes.jsonl"),
        ("notes.jsonl", "alias.jsonl"),
        ("hard.jsonl", "notes.jsonl"),
    ):
        result = cli("chunk", given, "-o", output, cwd=tmp_path)
        assert result.returncode == 2, (given, output)
        assert b"is also an input" in result.stderr and given.encode() in result.stderr
        assert notes.read_bytes() == before
    # The table's case: `spanchunk chunk notes.txt -o notes.txt` (no known kind, and an input).
    text = tmp_path / "notes.txt"
    text.write_text("My notes.\n", encoding="utf-8")
    result = cli("chunk", "notes.txt", "-o", "notes.txt", cwd=tmp_path)
    assert result.returncode == 2 and text.read_text(encoding="utf-8") == "My notes.\n"
    # A text file named as a JSON Lines output of the same name is refused too, by its kind.
    result = cli("chunk", str(docs), "-o", str(docs / "intro.md"))
    assert result.returncode == 2
    assert (docs / "intro.md").read_text(encoding="utf-8").startswith("# Intro")


def test_the_runs_own_outputs_are_never_inputs(docs: Path) -> None:
    out = docs / "chunks.jsonl"
    sizes = []
    for _ in range(3):
        result = cli("chunk", str(docs), "-o", str(out))
        assert result.returncode == 0, result.stderr
        sizes.append(out.stat().st_size)
        assert not any(record["source"].endswith("chunks.jsonl") for record in records(out))
    assert sizes[0] == sizes[1] == sizes[2]
    # A store inside the folder: neither it nor its -wal and -shm become documents.
    out.unlink()
    store = docs / "chunks.sqlite"
    for _ in range(2):
        assert cli("chunk", str(docs), "-o", str(store)).returncode == 0
    with SqliteRegistry.open(store) as opened:
        names = {Path(document).name for document in opened.document_ids()}
    assert names == {"intro.md", "guide.md", "notes.txt"}
    assert sorted(p.name for p in docs.iterdir() if p.name.startswith(".")) == []


def test_a_killed_runs_temporary_file_is_removed_by_the_next(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "chunks.jsonl"
    code = (
        "import os, sys, time\n"
        "import spanchunk.cli._writers as writers\n"
        "real = writers.JsonlWriter.write\n"
        "def slow(self, *args):\n"
        "    real(self, *args)\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "writers.JsonlWriter.write = slow\n"
        "from spanchunk.cli import main\n"
        f"sys.exit(main(['chunk', {str(docs)!r}, '-o', {str(out)!r}]))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"writing\n"
    process.send_signal(signal.SIGKILL)
    process.communicate()
    left = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(".chunks.jsonl.")
    assert not out.exists()  # never a partial output under the final name
    result = cli("chunk", str(docs), "-o", str(out))
    assert result.returncode == 0
    assert f"removed {left[0]}".encode() in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks.jsonl", "docs"]


def test_two_runs_into_one_new_store_keep_both(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, count in ((first, 30), (second, 30)):
        folder.mkdir()
        for number in range(count):
            (folder / f"{folder.name}{number}.txt").write_text(
                f"File {number} of {folder.name}. " * 200, encoding="utf-8"
            )
    store = tmp_path / "both.sqlite"
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "spanchunk", "chunk", str(folder), "-o", str(store)],
            stderr=subprocess.DEVNULL,
        )
        for folder in (first, second)
    ]
    for process in runs:
        assert process.wait(timeout=120) == 0
    with SqliteRegistry.open(store) as opened:
        documents = opened.document_ids()
    assert len(documents) == 60  # neither run's documents lost


def test_a_second_run_waits_for_the_first(docs: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    lock = tmp_path / ".s.sqlite.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        process = subprocess.Popen(
            [sys.executable, "-m", "spanchunk", "chunk", str(docs), "-o", str(store)],
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        line = process.stderr.readline()
        assert b"waiting for another run writing" in line and b"pid 4242" in line
        time.sleep(0.3)
        assert process.poll() is None and not store.exists()
        fcntl.flock(held, fcntl.LOCK_UN)
    process.communicate(timeout=60)
    assert process.returncode == 0
    assert len(stored_ids(store)) > 0
    assert not lock.exists()


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return mounted.returncode == 0


def test_a_full_disk_says_so_and_keeps_the_old_output(docs: Path, tmp_path: Path) -> None:
    small = tmp_path / "small"
    if not _mount_tmpfs(small, "1m"):
        pytest.skip("cannot mount a tmpfs here (needs root); test_cli_files fakes ENOSPC")
    try:
        big = tmp_path / "big"
        big.mkdir()
        for number in range(3):
            (big / f"b{number}.txt").write_text(
                " ".join(f"word{index}" for index in range(60_000)), encoding="utf-8"
            )
        out = small / "chunks.jsonl"
        out.write_text("old\n", encoding="utf-8")
        result = cli("chunk", str(big), "-o", str(out))
        assert result.returncode == 1
        assert b"No space left on device" in result.stderr and b"Traceback" not in result.stderr
        assert out.read_text(encoding="utf-8") == "old\n"
        assert sorted(p.name for p in small.iterdir()) == ["chunks.jsonl"]
        # A store updated on a full disk: the message, and the store still whole.
        store = small / "s.sqlite"
        assert cli("chunk", str(docs), "-o", str(store)).returncode == 0
        before = stored_ids(store)
        result = cli("chunk", str(docs), str(big), "-o", str(store))
        assert result.returncode == 1
        assert b"No space left on device" in result.stderr
        assert b"cannot rollback" not in result.stderr and b"Traceback" not in result.stderr
        assert set(before) <= set(stored_ids(store))
    finally:
        subprocess.run(["umount", str(small)], check=False)


def test_a_read_only_output_folder_says_so(docs: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        small = tmp_path / "ro"
        if not _mount_tmpfs(small, "1m"):
            pytest.skip("cannot mount a tmpfs here")
        try:
            subprocess.run(["mount", "-o", "remount,ro", str(small)], check=True)
            result = cli("chunk", str(docs), "-o", str(small / "x.jsonl"))
        finally:
            subprocess.run(["umount", str(small)], check=False)
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        result = cli("chunk", str(docs), "-o", str(folder / "x.jsonl"))
    assert result.returncode == 1
    assert b"Read-only file system" in result.stderr or b"Permission denied" in result.stderr
    assert b"Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------
# One identity for a document.


def test_one_file_has_the_same_ids_in_every_output(docs: Path, tmp_path: Path) -> None:
    pyarrow_parquet = pytest.importorskip("pyarrow.parquet")
    outs = {kind: tmp_path / f"out.{kind}" for kind in ("jsonl", "parquet", "sqlite")}
    for out in outs.values():
        assert cli("chunk", str(docs), "-o", str(out)).returncode == 0
    jsonl = sorted(record["id"] for record in records(outs["jsonl"]))
    parquet = sorted(pyarrow_parquet.read_table(outs["parquet"]).column("id").to_pylist())
    assert jsonl == parquet == sorted(stored_ids(outs["sqlite"]))
    # The API's file helper gives the same ids (the same settings, one chunker per kind).
    document = read_document(docs / "notes.txt")
    assert document.id == document_id(docs / "notes.txt") == str(docs / "notes.txt")
    api = {chunk.id for chunk in ParentChildChunker().chunk_tree(document)}
    assert api <= set(jsonl)
    # Hits embedded from JSON Lines expand through the store the same run's settings made.
    child = next(r for r in records(outs["jsonl"]) if r["level"] == 0)
    with SqliteRegistry.open(outs["sqlite"]) as store:
        assert store[child["id"]].parent_id == child["parent_id"]
        assert store[child["parent_id"]].text.find(child["text"]) >= 0


def test_identical_files_and_paths_named_twice(docs: Path, tmp_path: Path) -> None:
    licence = "Permission is hereby granted, free of charge. " * 30
    for name in ("a", "b"):
        (docs / name).mkdir()
        (docs / name / "LICENSE.txt").write_text(licence, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert (
        cli(
            "chunk", "docs", "./docs/", "docs/a/LICENSE.txt", "-o", str(out), cwd=tmp_path
        ).returncode
        == 0
    )
    found = records(out)
    ids = [record["id"] for record in found]
    assert len(ids) == len(set(ids))  # unique within one output
    licences = {r["document_id"] for r in found if r["source"].endswith("LICENSE.txt")}
    assert len(licences) == 2  # same text, two documents


def test_a_store_knows_its_documents_from_any_folder(docs: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    assert cli("chunk", "docs", "-o", "s.sqlite", cwd=tmp_path).returncode == 0
    before = stored_ids(store)
    again = cli("chunk", ".", "-o", "../s.sqlite", cwd=docs)
    assert again.returncode == 0
    assert b"0 added, 0 replaced, 3 unchanged, 0 pruned" in again.stderr
    # --prune from another folder touches only what lies under its PATHs.
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("Elsewhere. " * 20, encoding="utf-8")
    pruned = cli("chunk", ".", "-o", "../s.sqlite", "--prune", cwd=other)
    assert pruned.returncode == 0
    assert b"1 added, 0 replaced, 0 unchanged, 0 pruned" in pruned.stderr
    assert set(before) <= set(stored_ids(store))
    # A file removed under docs/ is pruned by a run over docs/ only.
    (docs / "notes.txt").unlink()
    gone = cli("chunk", "docs", "-o", "s.sqlite", "--prune", cwd=tmp_path)
    assert b"0 added, 0 replaced, 2 unchanged, 1 pruned" in gone.stderr
    with SqliteRegistry.open(store) as opened:
        assert str(other / "o.txt") in opened.document_ids()


def test_version_is_on_stdout() -> None:
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.startswith(b"spanchunk ")
    assert result.stderr == b""


def test_a_missing_path_fails_the_run_but_not_the_others(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = cli("chunk", str(docs), str(tmp_path / "typo"), "-o", str(out))
    assert result.returncode == 1
    assert b"typo: No such file or directory" in result.stderr
    assert {Path(r["source"]).name for r in records(out)} == {"intro.md", "guide.md", "notes.txt"}


def test_nothing_chunked_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"\x00\x01" * 10)
    (folder / "b.txt").write_bytes("café".encode("latin-1"))
    result = cli("chunk", str(folder), "-o", str(tmp_path / "o.jsonl"))
    assert result.returncode == 1
    assert b"no file could be chunked: 1 binary, 1 not UTF-8" in result.stderr
    assert b"--input-encoding" in result.stderr
    assert not (tmp_path / "o.jsonl").exists()
    latin = cli("chunk", str(folder), "--input-encoding", "latin-1", "-o", "-")
    assert latin.returncode == 0
    assert json.loads(latin.stdout.splitlines()[0])["text"] == "café"


def test_a_wide_input_encoding_is_text_in_every_output(tmp_path: Path) -> None:
    # UTF-16 without a byte order mark is full of NUL bytes: with --input-encoding it is
    # text, in the store as in JSON Lines (one binary rule for both).
    text = "Wide text without a mark.\n\nA second paragraph, é.\n"
    path = tmp_path / "wide.txt"
    path.write_bytes(text.encode("utf-16-le"))
    plain = cli("chunk", str(path), "--input-encoding", "utf-16-le", "-o", "-")
    assert plain.returncode == 0, plain.stderr
    store = tmp_path / "s.sqlite"
    stored = cli("chunk", str(path), "--input-encoding", "utf-16-le", "-o", str(store))
    assert stored.returncode == 0, stored.stderr
    assert sorted(stored_ids(store)) == sorted(
        json.loads(line)["id"] for line in plain.stdout.splitlines()
    )
    assert cli("chunk", str(path), "-o", "-").returncode == 1  # without it: binary


def test_utf16_and_utf32_with_a_byte_order_mark_are_text(tmp_path: Path) -> None:
    text = "Wide text, é and 🦀.\n\nA second paragraph.\n"
    for codec, mark in (
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-32-le", b"\xff\xfe\x00\x00"),
        ("utf-32-be", b"\x00\x00\xfe\xff"),
    ):
        path = tmp_path / f"{codec}.txt"
        path.write_bytes(mark + text.encode(codec))
        result = cli("chunk", str(path), "-o", "-")
        assert result.returncode == 0, (codec, result.stderr)
        decoded = "\ufeff" + text  # the mark is kept, as for UTF-8: offsets of this text
        for record in map(json.loads, result.stdout.splitlines()):
            assert decoded[record["start_char"] : record["end_char"]] == record["text"]
            span = decoded.encode()[record["start_byte"] : record["end_byte"]]
            assert span == record["text"].encode()
        # The API reads it the same way.
        assert read_document(path).text == decoded


def test_settings_errors_speak_the_command_lines_names(docs: Path) -> None:
    for args, said in (
        (["--overlap", "500"], b"--overlap must be smaller than --child-size"),
        (["--child-size", "0"], b"--child-size must be at least 1"),
        (["--input-encoding", "klingon"], b"--input-encoding 'klingon'"),
        (["--unit", "token", "--encoding", "nope"], b"--encoding"),
    ):
        result = cli("chunk", str(docs), *args)
        assert result.returncode == 2, args
        assert said in result.stderr, (args, result.stderr)
        assert b"usage:" not in result.stderr and b"Traceback" not in result.stderr


def test_negated_globs_exclude(docs: Path) -> None:
    result = cli("chunk", str(docs), "-g", "!*.md", "-o", "-")
    assert {Path(json.loads(line)["source"]).name for line in result.stdout.splitlines()} == {
        "notes.txt"
    }
    help_text = cli("chunk", "--help").stdout
    assert b"'!GLOB'" in help_text and b"paths" in help_text


def test_stdin_is_one_document(tmp_path: Path) -> None:
    text = b"# From stdin\n\nPiped text. " + b"More. " * 100
    named = cli("chunk", "-", "--stdin-name", "page.md", "-o", "-", stdin=text, cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    found = [json.loads(line) for line in named.stdout.splitlines()]
    assert {r["source"] for r in found} == {"page.md"}
    assert found[0]["headings"] == ["From stdin"]  # .md: Markdown
    assert found[0]["document_id"] == str(tmp_path / "page.md")
    plain = cli("chunk", "-", "-o", "-", stdin=text)
    assert {json.loads(line)["source"] for line in plain.stdout.splitlines()} == {"-"}
    store = tmp_path / "s.sqlite"
    assert cli("chunk", "-", "-o", str(store), "--stdin-name", "a.md", stdin=text).returncode == 0
    assert len(stored_ids(store)) > 1


def test_stdin_into_a_store_needs_a_name(tmp_path: Path) -> None:
    """A store keeps a document per id: two unnamed stdin runs would replace each other, so
    an unnamed one is refused and nothing is written; named ones are kept side by side."""
    store = tmp_path / "s.sqlite"
    unnamed = cli("chunk", "-", "-o", str(store), stdin=b"Piped text. " * 200)
    assert unnamed.returncode == 2
    assert b"--stdin-name NAME" in unnamed.stderr
    assert not store.exists()
    for name, text in (("a.txt", b"First. " * 300), ("b.txt", b"Second. " * 300)):
        named = cli("chunk", "-", "--stdin-name", name, "-o", str(store), stdin=text, cwd=tmp_path)
        assert named.returncode == 0, named.stderr
    with SqliteRegistry.open(store) as opened:
        sources = {Path(chunk.metadata["source"]).name for chunk in opened}
    assert sources == {"a.txt", "b.txt"}


def test_the_summary_speaks_the_runs_units(docs: Path) -> None:
    result = cli(
        "chunk", str(docs), "--unit", "token", "--parent-size", "200", "--child-size", "50"
    )
    assert b"children (tokens): " in result.stderr and b"parents (tokens): " in result.stderr
    words = cli("chunk", str(docs), "--unit", "char", "--child-unit", "word", "--child-size", "20")
    assert b"children (words): " in words.stderr and b"parents (chars): " in words.stderr
    for line in words.stderr.splitlines():
        if line.startswith(b"spanchunk:   children (words)"):
            assert int(line.rsplit(b"max ", 1)[1]) <= 20


# --------------------------------------------------------------------------------------------
# A look inside: info and dry runs.


def test_info_shows_what_a_store_holds(docs: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    assert cli("chunk", str(docs), "--child-size", "120", "-o", str(store)).returncode == 0
    shown = cli("info", str(store))
    assert shown.returncode == 0
    assert b"documents:  3" in shown.stdout and b"--child-size 120" in shown.stdout
    assert b"children:" in shown.stdout
    found = json.loads(cli("info", str(store), "--json").stdout)
    assert found["documents"] == 3
    assert found["settings"]["child_size"] == 120
    with SqliteRegistry.open(store) as opened:
        leaves = sum(1 for chunk in opened if chunk.level == 0)
    assert next(level for level in found["levels"] if level["level"] == 0)["chunks"] == leaves
    missing = cli("info", str(tmp_path / "typo.sqlite"))
    assert missing.returncode == 1 and b"no spanchunk store" in missing.stderr
    assert not (tmp_path / "typo.sqlite").exists()


def test_a_dry_run_lists_what_a_run_would_do_and_writes_nothing(docs: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first = cli("chunk", str(docs), "-o", str(store), "--dry-run")
    assert first.returncode == 0
    assert b"3 add" in first.stdout and b"nothing written" in first.stdout
    assert not store.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["docs"]
    assert cli("chunk", str(docs), "-o", str(store)).returncode == 0
    before = store.read_bytes()
    (docs / "guide.md").write_text("# Guide\n\nRewritten. " * 20, encoding="utf-8")
    (docs / "notes.txt").unlink()
    (docs / "new.txt").write_text("A new file. " * 20, encoding="utf-8")
    planned = cli("chunk", str(docs), "-o", str(store), "--dry-run", "--prune").stdout.decode()
    lines = {
        line.split()[0] + " " + Path(line.split()[1]).name for line in planned.splitlines()[:-1]
    }
    assert lines == {
        "add new.txt",
        "replace guide.md",
        "unchanged intro.md",
        "prune notes.txt",
        "skip logo.png",
    }
    assert "1 add, 1 replace, 1 unchanged, 1 prune, 1 skip" in planned
    assert store.read_bytes() == before
    done = cli("chunk", str(docs), "-o", str(store), "--prune")
    assert b"1 added, 1 replaced, 1 unchanged, 1 pruned" in done.stderr
