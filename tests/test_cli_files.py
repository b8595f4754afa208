"""``spanchunk chunk``: picking files (globs, binaries, links) and failing cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import spanchunk.cli._writers as writers
import spanchunk.ingest.pool as job
from spanchunk.cli import glob_matches, main
from spanchunk.cli._report import Reporter
from spanchunk.ingest import jobs
from spanchunk.ingest.files import File

REPO_ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> int:
    return main(["chunk", *args])


def sources(out: Path) -> list[str]:
    seen: list[str] = []
    for line in out.read_text(encoding="utf-8").splitlines():
        source = json.loads(line)["source"]
        if source not in seen:
            seen.append(source)
    return seen


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    for name in ["a.md", "b.txt", "docs/c.md", "docs/deep/d.md", "src/e.py", "node_modules/f.md"]:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Text of {name}.\n", encoding="utf-8")
    (root / ".hidden.md").write_text("hidden", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("*.md", "a.md", True),
        ("*.md", "docs/deep/d.md", True),
        ("*.md", "a.txt", False),
        ("docs/*.md", "docs/c.md", True),
        ("docs/*.md", "docs/deep/d.md", False),
        ("docs/**/*.md", "docs/deep/d.md", True),
        ("docs/**", "docs/deep/d.md", True),
        ("node_modules", "node_modules", True),
        ("[ab].*", "b.txt", True),
        ("?.md", "ab.md", False),
    ],
)
def test_globs_match_as_ripgrep_does(glob: str, path: str, expected: bool) -> None:
    assert glob_matches(glob, path) is expected


def relative(out: Path, root: Path) -> list[str]:
    return [Path(source).relative_to(root).as_posix() for source in sources(out)]


def test_include_and_exclude(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "-o", str(out)) == 0
    assert relative(out, tree) == [
        "a.md", "b.txt", "docs/c.md", "docs/deep/d.md", "node_modules/f.md", "src/e.py",
    ]  # fmt: skip
    assert run(str(tree), "--include", "*.md", "--exclude", "node_modules", "-o", str(out)) == 0
    assert relative(out, tree) == ["a.md", "docs/c.md", "docs/deep/d.md"]
    assert run(str(tree), "-g", "docs/**", "-g", "*.py", "--exclude", "deep", "-o", str(out)) == 0
    assert relative(out, tree) == ["docs/c.md", "src/e.py"]
    # Globs are relative to each PATH argument.
    assert run(str(tree / "docs"), "--include", "c.md", "-o", str(out)) == 0
    assert relative(out, tree) == ["docs/c.md"]


def test_binary_files_are_counted_not_listed(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + b"x" * 100)
    (tree / "late_nul.txt").write_bytes(b"a" * 9000 + b"\x00")  # past the 8 KB probe
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "image.png" not in err
    assert "1 binary" in err
    assert any(source.endswith("late_nul.txt") for source in sources(out))
    assert run(str(tree), "--verbose", "-o", str(out)) == 0
    assert "image.png: binary" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".sqlite"])
def test_a_run_with_nothing_to_chunk_fails_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"\x00\x01")
    (folder / "b.txt").write_bytes(b"text with a NUL\x00")
    out = tmp_path / f"out{suffix}"
    assert run(str(folder), "-o", str(out)) == 1
    assert "spanchunk: error: no file could be chunked" in capsys.readouterr().err
    assert run(str(tmp_path / "in" / "nothing-here"), "-o", str(out)) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(str(empty), "-o", str(out)) == 1
    assert "spanchunk: error: no files found" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty", "in"]


def test_not_utf8_is_reported_once_each(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert err.count("latin1.txt") == 1
    assert "not UTF-8 (byte 0xe9 at offset 3)" in err
    assert "1 not UTF-8" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file_and_folder(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "b.txt").chmod(0)
    (tree / "docs").chmod(0)
    try:
        out = tmp_path / "out.jsonl"
        assert run(str(tree), "-o", str(out)) == 0
    finally:
        (tree / "docs").chmod(0o755)
        (tree / "b.txt").chmod(0o644)
    err = capsys.readouterr().err
    assert "b.txt: Permission denied" in err
    assert "docs: Permission denied" in err


def test_file_gone_or_a_folder_when_read_is_unreadable(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Listed, then removed (or replaced by a folder) before the core reads it: the system's
    # error, worded as Python's OSError.strerror words it, for that file alone.
    real_batches = job.batches

    def then_changed(files: Iterable[File], *sizes: int | None) -> object:
        files = list(files)  # every file listed first
        (tree / "b.txt").unlink()
        (tree / "a.md").unlink()
        (tree / "a.md").mkdir()
        return real_batches(files, *sizes)

    monkeypatch.setattr(job, "batches", then_changed)
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "--workers", "1", "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "b.txt: No such file or directory" in err
    assert "a.md: Is a directory" in err
    assert "2 unreadable" in err
    assert not any(source.endswith(("b.txt", "a.md")) for source in sources(out))
    assert any(source.endswith("c.md") for source in sources(out))


def test_broken_symlink_and_missing_path(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "gone.md").symlink_to(tree / "nowhere.md")
    out = tmp_path / "out.jsonl"
    # A PATH that does not exist fails the run (as cp and rg do); the others are chunked.
    assert run(str(tree), str(tmp_path / "missing.txt"), "-o", str(out)) == 1
    err = capsys.readouterr().err
    assert "gone.md: broken symbolic link" in err
    assert "missing.txt: No such file or directory" in err
    assert "PATH not found" in err
    assert any(source.endswith("c.md") for source in sources(out))
    # A broken link inside a folder is reported, not a failure.
    (tmp_path / "missing.txt").write_text("now here\n", encoding="utf-8")
    assert run(str(tree), str(tmp_path / "missing.txt"), "-o", str(out)) == 0


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_file_read_past_its_size_is_skipped_as_changed(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A /proc file is a regular file of size 0 that reads as text: what was read is not
    # what the file's size said, as when a file grows while it is read.
    out = tmp_path / "out.jsonl"
    assert run(str(tree / "a.md"), "/proc/self/status", "--workers", "1", "-o", str(out)) == 0
    assert "/proc/self/status: the file changed while it was read" in capsys.readouterr().err
    assert [Path(source).name for source in sources(out)] == ["a.md"]


def test_nothing_chunked_fails_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "bin").write_bytes(b"\x00" * 10)
    out = tmp_path / "out.jsonl"
    assert run(str(tmp_path / "bin"), "-o", str(out)) == 1
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bin"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_full_disk_leaves_no_output(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    if suffix == ".jsonl":
        monkeypatch.setattr(writers.JsonlWriter, "write", full)
    else:
        monkeypatch.setattr(writers.ParquetWriter, "commit", full)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    assert run(str(tree), "-o", str(out_dir / f"chunks{suffix}")) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_full_disk_on_a_real_tmpfs(tree: Path, tmp_path: Path, suffix: str) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        big = tree / "big.txt"
        big.write_text("Words words words.\n" * 5000, encoding="utf-8")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "spanchunk",
                "chunk",
                str(tree),
                "-o",
                str(mount / f"o{suffix}"),
            ],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert result.returncode == 1, result.stderr
        assert "No space left on device" in result.stderr
        assert list(mount.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_closed_stdout_exits_quietly(tree: Path) -> None:
    big = tree / "big.txt"
    big.write_text("Words words words.\n" * 200_000, encoding="utf-8")
    command = (
        f"{sys.executable} -m spanchunk chunk {tree} | head -c 100 > /dev/null; "
        "echo ${PIPESTATUS[0]}"
    )
    result = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.stdout.strip() == "1"
    assert "Traceback" not in result.stderr
    assert "BrokenPipe" not in result.stderr


def test_interrupt_leaves_no_temporary_file(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(jobs, "process_batch", interrupted)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for workers in ("1", "2"):
        assert run(str(tree), "--workers", workers, "-o", str(out_dir / "o.jsonl")) == 130
        assert list(out_dir.iterdir()) == []


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

    terminal = Terminal()
    reporter = Reporter(terminal, verbose=False)  # type: ignore[arg-type]
    reporter.start(100, 50_000_000)
    reporter.advance(10, 5_000_000)
    reporter.close()
    assert "files" in terminal.text and "B" in terminal.text
    piped = Terminal()
    piped.isatty = lambda: False  # type: ignore[method-assign]
    reporter = Reporter(piped, verbose=False)  # type: ignore[arg-type]
    reporter.start(100, 50_000_000)
    reporter.advance(10, 5_000_000)
    reporter.close()
    assert piped.text == ""


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # What argparse cannot parse: its usage block and status 2.
    for args in (
        ["x", "--workers", "0"],
        ["x", "--compression", "zstd", "-o", str(tmp_path / "x.parquet")],
    ):
        with pytest.raises(SystemExit) as exited:
            run(*args)
        assert exited.value.code == 2, args
        assert "usage:" in capsys.readouterr().err
    # Settings understood but impossible: status 2, the command line's names, no usage.
    for args, said in (
        (["x", "--child-size", "3000"], "--child-size must be smaller than --parent-size"),
        (["x", "--encoding", "cl100k_base"], "--encoding applies to token units only"),
        (["x", "-o", str(tmp_path)], "is a folder"),
        (["x", "--compression", "lz4", "-o", str(tmp_path / "x.jsonl")], "--compression"),
        (["x", "--pool", "process", "-o", str(tmp_path / "x.parquet")], "--pool process"),
    ):
        assert run(*args) == 2, args
        err = capsys.readouterr().err
        assert said in err, (args, err)
        assert "usage:" not in err
    assert list(tmp_path.iterdir()) == []


def test_folders_are_walked_in_the_order_of_their_sorted_paths(tmp_path: Path) -> None:
    # Files come as the walk goes, folder by folder: the order must still be that of
    # sorting every path relative to the PATH, component by component.
    root = tmp_path / "walk"
    names = ["a/b.md", "a.txt", "a-b/x.md", "a/c/d.md", "B.md", "a/b/e.md", "z", "é.md"]
    for name in names:
        path = root / name
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Text of {name}.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert run(str(root), "-o", str(out)) == 0
    found = [Path(source).relative_to(root).parts for source in sources(out)]
    listed = [path.relative_to(root).parts for path in root.rglob("*") if path.is_file()]
    assert found == sorted(listed)
    assert len(found) == len(names)
