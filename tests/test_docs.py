"""Every example of README.md and docs/ runs, and every relative link leads to a file.

- Each ```python block runs in a fresh namespace, from the repository root (a block that
  starts with ``>>>`` runs as a doctest): no block relies on another.
- Each ```sh (or ```console) block of ``spanchunk`` commands runs in a scratch folder holding
  a small ``docs/`` tree, ``spanchunk`` being ``python -m spanchunk``; every command must exit
  with status 0, or with the status its comment gives (``# exit status 2: ...``).
- A block that cannot run here carries ``<!-- not run: KIND -->`` right above its fence, and
  its kind must be one of the few allowed: ``installs packages`` (pip), ``builds the
  package`` (maturin, cargo) or ``external tool (NAME)`` (DuckDB's command line, curl, a Ray
  cluster, Spark), so nothing else escapes. ```text and ```json blocks show output.
- Relative links (and images) of the README and the docs lead to files that exist, and
  anchors to headings that exist; the docs' links stay inside docs/, as the site needs.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import spanchunk

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
#: The folder spanchunk is imported from, for the ``python -m spanchunk`` of the shell blocks.
PYTHON_DIR = Path(spanchunk.__file__).resolve().parent.parent

PYTHON = {"python"}
SHELL = {"sh", "console", "bash", "shell"}
SHOWN = {"text", "json"}  # output, shown; not code

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
MARKER = re.compile(r"^\s*<!-- not run: (?P<reason>.+?) -->\s*$")
KINDS = re.compile(
    r"(?P<kind>installs packages|builds the package|external tool) ?(?:\((?P<tool>[^)]+)\))?$"
)
#: The external tools a block may need, and the command word the block must then hold.
EXTERNAL_TOOLS = {"duckdb": "duckdb", "curl": "curl", "a Ray cluster": "ray", "Spark": "pyspark"}
#: The first word of every line of a "builds the package" block.
BUILD_COMMANDS = {"pip", "maturin", "cargo", "auditwheel", ".ci/wheels", "fuzz/run.sh"}
#: The commands a shell block that runs may use besides spanchunk.
SHELL_COMMANDS = {"spanchunk", "rm", "echo", "mkdir", "cd", "printf", "cat", "touch", "ls", "cp"}

#: The scratch folder's tree: what the shell blocks' ``docs/`` holds.
SCRATCH_TREE = {
    "docs/intro.md": "# Intro\n\n" + "Some text. " * 400,
    "docs/old.txt": "To be deleted. " * 100,
}


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # of the opening fence, from 1
    language: str
    text: str
    marker: str | None  # the reason of the `<!-- not run: ... -->` line above it

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    """The fenced code blocks of a page, in order (CommonMark fences: a fence closes only on a
    line of the same character, at least as long)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks = []
    number = 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if not opening:
            number += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = number + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        assert end < len(lines), f"{page.name}:{number + 1}: the fence is never closed"
        above = next((line for line in reversed(lines[:number]) if line.strip()), "")
        marker = MARKER.match(above)
        body = "\n".join(line[indent:] for line in lines[number + 1 : end]) + "\n"
        blocks.append(
            Block(page, number + 1, opening["info"], body, marker["reason"] if marker else None)
        )
        number = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in blocks_of(page)]
PYTHON_BLOCKS = [block for block in BLOCKS if block.language in PYTHON and not block.marker]
SHELL_BLOCKS = [block for block in BLOCKS if block.language in SHELL and not block.marker]


def test_the_pages_exist() -> None:
    assert README.is_file(), "README.md is missing"
    assert len(PAGES) > 10, "docs/ has lost its pages"
    assert any(block.page == README for block in PYTHON_BLOCKS), "README.md has no example"


def test_the_readme_gives_the_set_up_commands() -> None:
    readme = README.read_text(encoding="utf-8")
    # CI (.ci/run, .ci/wheels) runs these two, as written here.
    assert 'pip install ".[test]" && pytest' in readme
    assert "pip install . && spanchunk chunk README.md CHANGELOG.md rust -o chunks.jsonl" in readme


def test_every_integration_has_an_example() -> None:
    for module in ("langchain", "llamaindex", "haystack", "ray"):
        assert any(
            f"spanchunk.integrations.{module} import" in block.text for block in PYTHON_BLOCKS
        ), module


def test_every_block_has_a_known_language() -> None:
    for block in BLOCKS:
        assert block.language in PYTHON | SHELL | SHOWN, (
            f"{block.name}: a block of language {block.language!r}: name it python, sh, "
            "text or json"
        )


def test_every_marker_is_above_a_block() -> None:
    fenced = {(block.page, block.line) for block in BLOCKS}
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if line.strip().startswith("<!--") and "not run" in line:
                below = next(
                    (n for n in range(number + 1, len(lines)) if lines[n].strip()), len(lines)
                )
                assert (page, below + 1) in fenced, f"{page.name}:{number + 1}: {line.strip()}"


def test_blocks_that_do_not_run_are_of_an_allowed_kind() -> None:
    for block in BLOCKS:
        if not block.marker:
            continue
        match = KINDS.fullmatch(block.marker)
        assert match, f"{block.name}: not run for {block.marker!r}, which is no allowed kind"
        kind, tool = match["kind"], match["tool"]
        lines = [
            line.strip()
            for line in block.text.splitlines()
            if line.strip() and not line.strip().startswith("#")
        ]
        if kind == "external tool":
            assert tool in EXTERNAL_TOOLS, f"{block.name}: {tool!r} is no known external tool"
            assert EXTERNAL_TOOLS[tool] in block.text, f"{block.name}: does not use {tool}"
            continue
        assert block.language in SHELL, f"{block.name}: only shell blocks install or build"
        for line in lines:
            if re.match(r"^\w+=\$\(ls [^)]*\)$", line):  # wheel=$(ls target/wheels/...)
                continue
            words = shlex.split(line, comments=True)
            if kind == "installs packages":
                assert words[:2] == ["pip", "install"], f"{block.name}: {line!r} installs nothing"
            else:
                assert words[0] in BUILD_COMMANDS, f"{block.name}: {line!r} builds nothing"
                if words[0] == "pip":
                    assert words[1] == "install", f"{block.name}: {line!r}"


def test_json_blocks_parse() -> None:
    for block in BLOCKS:
        if block.language == "json":
            for line in block.text.splitlines():
                if line.strip():
                    json.loads(line)


# --------------------------------------------------------------------------- python blocks


def run_python(block: Block) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    if block.text.lstrip().startswith(">>>"):
        parser = doctest.DocTestParser()
        test = parser.get_doctest(block.text, namespace, block.name, str(block.page), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, f"{block.name}: failing doctest lines (output above)"
    else:
        code = compile(block.text, block.name, "exec")
        exec(code, namespace)  # running the documented example is the test


# Ray Data's DataContext sets its deprecated fields from its own __init__, which warns.
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda block: block.name)
def test_python_block_runs(
    block: Block, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # From the repository root, as a reader of the README would run it.
    monkeypatch.chdir(ROOT)
    run_python(block)
    capsys.readouterr()


# --------------------------------------------------------------------------- shell blocks


@dataclass(frozen=True)
class Command:
    line: int  # in the block, from 1
    text: str
    status: int  # the exit status expected


def commands_of(block: Block) -> list[Command]:
    """The commands of a shell block (a console block's are its ``$ `` lines), each with
    the exit status its comment gives (0 without one); every command a command may run is
    one of ``SHELL_COMMANDS``."""
    commands = []
    pending = ""
    for number, raw in enumerate(block.text.splitlines(), start=1):
        line = raw.strip()
        if block.language == "console":
            if not (line.startswith("$ ") or pending):
                continue  # output
            line = line.removeprefix("$ ")
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if not line or line.startswith("#"):
            continue
        expected = re.search(r"#.*\bexit status (\d+)", line)
        commands.append(Command(number, line, int(expected[1]) if expected else 0))
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.commenters = "#"
        tokens = list(lexer)
        starts = [0] + [n + 1 for n, token in enumerate(tokens) if token in {"&&", "||", "|", ";"}]
        for start in starts:
            assert tokens[start] in SHELL_COMMANDS, (
                f"{block.name}: line {number} runs {tokens[start]!r}: a block that runs may use "
                f"{sorted(SHELL_COMMANDS)}; mark it <!-- not run: external tool (NAME) -->"
            )
    return commands


def script_of(block: Block) -> str:
    lines = ['spanchunk() { "$PYTHON" -m spanchunk "$@"; }']
    for command in commands_of(block):
        lines += [
            command.text,
            "status=$?",
            f'if [ "$status" -ne {command.status} ]; then',
            f'  echo "line {command.line}: exit status $status, expected {command.status}: "'
            f" {shlex.quote(command.text)} >&2",
            "  exit 99",
            "fi",
        ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda block: block.name)
def test_shell_block_runs(block: Block, tmp_path: Path) -> None:
    assert commands_of(block), f"{block.name}: a shell block with no command"
    for name, text in SCRATCH_TREE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), *sys.path]),
    }
    result = subprocess.run(
        ["bash", "-c", script_of(block)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, f"{block.name}:\n{result.stderr}"


def test_commands_are_read_with_their_exit_status() -> None:
    block = Block(README, 1, "sh", "spanchunk chunk x  # exit status 1: x is missing\n", None)
    (command,) = commands_of(block)
    assert command.status == 1
    escaping = Block(README, 1, "sh", "spanchunk chunk docs | duckdb -c 'select 1'\n", None)
    with pytest.raises(AssertionError, match="duckdb"):
        commands_of(escaping)


# --------------------------------------------------------------------------- links

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+).+?\1")


def outside_fences(page: Path) -> list[str]:
    """The page's lines, those of its fenced blocks blanked out."""
    lines = page.read_text(encoding="utf-8").splitlines()
    for block in blocks_of(page):
        for number in range(block.line - 1, block.line + len(block.text.splitlines()) + 1):
            lines[number] = ""
    return lines


def prose_of(page: Path) -> str:
    """The page without its code: fenced blocks blanked out, inline code removed."""
    return INLINE_CODE.sub("", "\n".join(outside_fences(page)))


def anchors_of(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub and the site's toc spell them."""
    anchors = set()
    for line in outside_fences(page):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        title = re.sub(r"`|<[^>]+>", "", heading[1]).strip().lower()
        ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
        anchors.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))  # GitHub
        anchors.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_title)).strip("-"))
    return anchors


def test_headings_give_the_anchors_links_use() -> None:
    assert {"haystacks-units-words-sentences-passages-pages", "spark-mapinarrow"} <= anchors_of(
        DOCS / "chunkers.md"
    ) | anchors_of(DOCS / "integrations.md")


def test_relative_links_resolve() -> None:
    for page in PAGES:
        for match in LINK.finditer(prose_of(page)):
            target = match["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.exists(), f"{page.name}: {target} leads to no file"
            if page.parent == DOCS:
                assert DOCS in file.parents, f"{page.name}: {target} is outside docs/"
            if anchor and file.suffix == ".md":
                assert anchor in anchors_of(file), f"{page.name}: {target}: no such heading"


def test_every_page_is_in_the_site_navigation() -> None:
    navigation = re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert sorted(navigation) == sorted(p.relative_to(DOCS).as_posix() for p in PAGES[1:])


def test_the_plots_are_the_benchmarks() -> None:
    for name in ("compare.png", "retrieval.png"):
        shown = (DOCS / "assets" / name).read_bytes()
        assert shown == (ROOT / "benches" / "results" / name).read_bytes(), (
            f"docs/assets/{name} differs from benches/results/{name}: copy it again"
        )


# --------------------------------------------------------------------------- wheel smoke test


def wheel_smoke() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wheel_smoke", ROOT / ".ci" / "wheel_smoke.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["wheel_smoke"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_wheel_smoke_test_runs_the_blocks_a_bare_install_can() -> None:
    """`.ci/wheel_smoke.py` (run by .ci/wheels against a wheel in a fresh environment) reads
    the same python blocks as this file, and runs exactly those that need nothing but
    spanchunk and its own dependencies: none of them needs pyarrow, Ray or a framework."""
    smoke = wheel_smoke()
    blocks = [
        block for page in smoke.pages(smoke.DEFAULT_PAGES) for block in smoke.python_blocks(page)
    ]
    python = [block for block in BLOCKS if block.language in PYTHON]
    assert [block.name for block in blocks] == [block.name for block in python]
    assert [block.not_run for block in blocks] == [block.marker for block in python]

    def bare(module: str) -> bool:  # what a fresh environment with the wheel alone has
        return module in smoke.OWN

    chosen, skipped = smoke.select(blocks, bare)
    for block in chosen:
        assert set(smoke.needs(block)) <= smoke.OWN, block.name
        for optional in ("pyarrow", "ray", "tokenizers", "duckdb", "langchain", "haystack"):
            assert not re.search(rf"^\s*(from|import) {optional}\b", block.text, re.M), (
                f"{block.name} runs in the smoke test but imports {optional}"
            )
    skipped_names = {block.name for block, _ in skipped}
    for block in PYTHON_BLOCKS:
        imports = set(re.findall(r"^\s*(?:>>> )?(?:from|import) (\w+)", block.text, re.M))
        optional = imports - smoke.OWN - sys.stdlib_module_names
        integration = "spanchunk.integrations" in block.text
        assert (block.name in skipped_names) == bool(optional or integration), block.name
    chosen_names = [block.name for block in chosen]
    assert any(name.startswith("README.md") for name in chosen_names)
    assert len(chosen) >= 15, chosen_names
    assert all(reason.startswith(("needs ", "not run: ")) for _, reason in skipped)
