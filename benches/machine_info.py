"""What a benchmark report says of the machine and the tree it ran on: the CPU's model, a
package's installed version, the repository's commit."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def version_of(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str | None:
    """The repository's HEAD, marked when the sources of the extension differ from it."""

    def git(*arguments: str) -> str:
        return subprocess.run(
            ["git", "-C", str(REPOSITORY), *arguments],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--", "rust", "python", "Cargo.toml")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head} (rust/ or python/ modified)" if changed else head
