"""Every file a comment, a docstring or a page names exists, and every section of
``benches/NOTES.md`` that one names (``benches/NOTES.md, under `PATH` ``) is there: a moved or
renamed file leaves no reference behind.

Paths are read in the package, the core, the benchmarks, the build files and CI's script, and
in the pages outside their code blocks; the few example paths that stand for a user's files
(``docs/intro.md`` in a glob's example) are listed in ``EXAMPLES``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = re.compile(
    r"(?<![\w/.-])((?:rust|python/spanchunk|docs|tests|benches|fuzz|\.ci)/[\w./-]*\w"
    r"\.(?:rs|py|pyi|md|toml|json|sh|yml))"
)
UNDER = re.compile(r"NOTES\.md``?,? under ``?([^`\s]+?)``?[ .,;)]")
#: Paths that stand for a user's files in examples (a glob's, an id's), not this repository's.
EXAMPLES = {
    "docs/a.md",
    "docs/intro.md",
    "docs/api/index.md",
    "docs/new.md",
    "docs/c.md",
    "docs/chunks.json",
}


def sources() -> list[Path]:
    found = [ROOT / "Cargo.toml", ROOT / "pyproject.toml", ROOT / ".ci" / "run", ROOT / "README.md"]
    for folder, patterns in (
        ("python", ("*.py", "*.pyi")),
        ("rust", ("*.rs",)),
        ("benches", ("*.py", "*.rs", "*.md")),
        ("docs", ("*.md",)),
    ):
        for pattern in patterns:
            found += sorted((ROOT / folder).rglob(pattern))
    return [path for path in found if path.exists() and "results" not in path.parts]


def prose(path: Path) -> str:
    """The text of a file; of a page, without its code blocks."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".md":
        return text
    return re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.MULTILINE | re.DOTALL)


def test_every_named_file_exists() -> None:
    missing = [
        f"{path.relative_to(ROOT)}: {reference}"
        for path in sources()
        for reference in REFERENCE.findall(prose(path))
        if reference not in EXAMPLES and not (ROOT / reference).exists()
    ]
    assert not missing, "\n".join(missing)


def test_every_named_notes_section_exists() -> None:
    notes = (ROOT / "benches" / "NOTES.md").read_text(encoding="utf-8")
    sections = {line[3:].strip() for line in notes.splitlines() if line.startswith("## ")}
    missing = [
        f"{path.relative_to(ROOT)}: {section}"
        for path in sources()
        for section in UNDER.findall(path.read_text(encoding="utf-8"))
        if section not in sections
    ]
    assert not missing, "\n".join(missing)
