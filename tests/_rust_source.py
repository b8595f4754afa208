"""Reading the Rust core's sources for the tests on its shape (`test_rust_layers.py`,
`test_names.py`): each file's code without comments, literals or test-only items, its
modules, the paths it names and its top-level items.

No Rust parser: the sources are `cargo fmt`-formatted (CI checks it), so a top-level item
starts a line at column 0, and blanking comments and literals leaves braces to count.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

RUST = Path(__file__).resolve().parent.parent / "rust"

# A char literal (`'a'`, `'\n'`, `'\u{1f}'`, `'{'`); a lifetime (`'a`) has no closing quote.
_CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'")
# A raw string's opening: `r"`, `r#"`, `br##"` ...
_RAW = re.compile(r'b?r(#*)"')


def blank_literals(source: str) -> str:
    """`source` with every comment, string and char literal's content replaced by spaces
    (line feeds kept, so line numbers hold), and the quotes kept."""
    out: list[str] = []
    at, end = 0, len(source)

    def blank(text: str) -> str:
        return re.sub(r"[^\n]", " ", text)

    while at < end:
        char = source[at]
        if source.startswith("//", at):
            stop = source.find("\n", at)
            stop = end if stop < 0 else stop
            out.append(blank(source[at:stop]))
            at = stop
        elif source.startswith("/*", at):
            depth, stop = 1, at + 2
            while stop < end and depth:
                if source.startswith("/*", stop):
                    depth, stop = depth + 1, stop + 2
                elif source.startswith("*/", stop):
                    depth, stop = depth - 1, stop + 2
                else:
                    stop += 1
            out.append(blank(source[at:stop]))
            at = stop
        elif (raw := _RAW.match(source, at)) and (at == 0 or not _word(source[at - 1])):
            closing = '"' + raw.group(1)
            stop = source.find(closing, raw.end())
            stop = end if stop < 0 else stop + len(closing)
            out.append('""' + blank(source[at + 2 : stop]))
            at = stop
        elif char == '"':
            stop = at + 1
            while stop < end and source[stop] != '"':
                stop += 2 if source[stop] == "\\" else 1
            out.append('"' + blank(source[at + 1 : stop]) + '"')
            at = stop + 1
        elif char == "'" and (literal := _CHAR.match(source, at)):
            out.append("'" + blank(literal.group()[1:-1]) + "'")
            at = literal.end()
        else:
            out.append(char)
            at += 1
    return "".join(out)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def item_end(code: str, start: int) -> int:
    """Where the item starting at `start` ends: after its `;` (a `use`, a unit struct, a
    `mod name;`) or after the `}` closing its first block."""
    depth = 0
    for position in range(start, len(code)):
        char = code[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return position + 1
        elif char == ";" and depth == 0:
            return position + 1
    return len(code)


_TEST_ITEM = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*")


def without_tests(code: str) -> str:
    """`code` (literals blanked) without its `#[cfg(test)]` items (tests may use anything)."""
    while match := _TEST_ITEM.search(code):
        stop = item_end(code, match.end())
        code = (
            code[: match.start()] + re.sub(r"[^\n]", " ", code[match.start() : stop]) + code[stop:]
        )
    return code


@cache
def code_of(path: Path) -> str:
    """The file's code: comments and literals blanked, test-only items removed."""
    return without_tests(blank_literals(path.read_text(encoding="utf-8")))


def test_files() -> set[Path]:
    """The files that are test-only modules (`#[cfg(test)] mod testing;`, a `#[path]`ed
    `split_tests.rs`)."""
    found = set()
    declared = re.compile(r'#\[cfg\(test\)\]\s*(?:#\[path\s*=\s*"([^"]+)"\]\s*)?mod (\w+);')
    for path in RUST.rglob("*.rs"):
        folder = path.parent if path.name in ("mod.rs", "lib.rs") else path.with_suffix("")
        for given, name in declared.findall(path.read_text(encoding="utf-8")):
            if given:
                found.add((path.parent / given).resolve())
            else:
                found |= {(folder / f"{name}.rs").resolve(), (folder / name / "mod.rs").resolve()}
    return found


def module_name(path: Path) -> str:
    """`rust/job/walk.rs` -> `job::walk`; a `mod.rs` is its folder, `lib.rs` the crate (``)."""
    parts = list(path.relative_to(RUST).with_suffix("").parts)
    if parts == ["lib"] or parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


@cache
def source_files() -> dict[str, Path]:
    """Every module of the crate that is not test-only, by name."""
    tests = test_files()
    return {
        module_name(path): path
        for path in sorted(RUST.rglob("*.rs"))
        if path.resolve() not in tests
    }


def parent(module: str) -> str:
    return module.rpartition("::")[0]


# A `use` statement: whether it is public (a re-export), and its tree.
_USE_STATEMENT = re.compile(r"(?<![\w:])(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
_PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)")


def use_paths(tree: str) -> list[list[str]]:
    """The paths a `use` tree names: `a::{b, c::{d as e}}` -> `a::b`, `a::c::d`."""
    found: list[list[str]] = []

    def walk(prefix: list[str], tree: str) -> None:
        tree = tree.strip()
        if tree.startswith("{"):
            depth, start = 0, 1
            for position, char in enumerate(tree):
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        walk(prefix, tree[start:position])
                        return
                elif char == "," and depth == 1:
                    walk(prefix, tree[start:position])
                    start = position + 1
            return
        if not tree:
            return
        head, separator, rest = tree.partition("::")
        if separator and rest.strip():
            walk([*prefix, head.strip()], rest)
        else:
            found.append([*prefix, head.split(" as ")[0].strip()])

    walk([], re.sub(r"\s+", " ", tree))
    return found


@cache
def reexports() -> dict[str, dict[str, list[str]]]:
    """What each module re-exports (`pub use tree::{Splitter, ...};`): name -> its path."""
    return {
        module: {
            path[-1]: path
            for public, tree in _USE_STATEMENT.findall(code_of(file))
            if public
            for path in use_paths(tree)
        }
        for module, file in source_files().items()
    }


def resolve(module: str, path: list[str], depth: int = 0) -> str:
    """The module that `path`, named in `module`, leads to: the longest module it walks
    through, re-exports followed (`crate::Splitter` -> `engine::plan`)."""
    modules = source_files()
    if path[0] == "crate":
        current, rest = "", path[1:]
    else:
        current, rest = module, list(path)
        while rest and rest[0] in ("super", "self"):
            current = parent(current) if rest[0] == "super" else current
            rest = rest[1:]
    for name in rest:
        inner = f"{current}::{name}" if current else name
        if inner in modules:
            current = inner
            continue
        origin = reexports().get(current, {}).get(name)
        if origin is not None and depth < 8:
            return resolve(current, origin, depth + 1)
        break
    return current


def children(module: str) -> set[str]:
    """The names of `module`'s own child modules."""
    return {
        name.rpartition("::")[2]
        for name in source_files()
        if name and name != module and parent(name) == module
    }


def named_paths(module: str) -> list[list[str]]:
    """The paths `module`'s code names (`crate::`, `super::`, `self::` or a child module's
    name first), in `use` trees and in code, without the re-exports of its own files (a
    folder presenting its files' names does not use them: whoever uses the names does)."""
    code = code_of(source_files()[module])
    own = children(module)
    inside = f"{module}::" if module else ""
    found: list[list[str]] = []
    for statement in _USE_STATEMENT.finditer(code):
        paths = [
            path
            for path in use_paths(statement.group(2))
            if path[0] in ("crate", "super", "self") or path[0] in own
        ]
        if statement.group(1):
            paths = [path for path in paths if not resolve(module, path).startswith(inside)]
        found += paths
    code = _USE_STATEMENT.sub(" ", code)
    found += [raw.split("::") for raw in _PATH.findall(code)]
    for name in own:
        pattern = rf"(?<![\w:]){name}((?:::\w+)+)"
        found += [[name, *tail.split("::")[1:]] for tail in re.findall(pattern, code)]
    return found


@cache
def module_uses() -> dict[str, set[str]]:
    """Which modules each module uses, by the paths it names."""
    uses = {}
    for module in source_files():
        targets = {resolve(module, path) for path in named_paths(module)}
        uses[module] = targets - {module}
    return uses


def circles() -> list[list[str]]:
    """Every circle of modules that use each other, once each (as its first member, in
    sorted order, meets it)."""
    uses = module_uses()
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for start in sorted(uses):
        # Breadth first from each module it uses, back to itself: its shortest circle.
        for first in sorted(uses[start]):
            trail = {first: [start, first]}
            pending = [first]
            while pending:
                module = pending.pop(0)
                if module == start:
                    members = frozenset(trail[module][:-1])
                    if members not in seen:
                        seen.add(members)
                        found.append(trail[module])
                    break
                for other in sorted(uses.get(module, ())):
                    if other not in trail:
                        trail[other] = [*trail[module], other]
                        pending.append(other)
    return found


_ITEM = re.compile(
    r"^(?:pub(?:\([^)]*\))? )?(?:const )?(?:async )?(?:unsafe )?(?:extern \"\w*\" )?"
    r"(struct|enum|union|trait|type|fn) (\w+)",
    flags=re.M,
)


def top_level_items() -> list[tuple[str, str, Path, int]]:
    """(name, kind, file, line) of every top-level item that is not test-only: a `struct`,
    `enum`, `union`, `trait`, `type` or free `fn` at column 0 (methods and items inside
    functions are indented). A file's two items of one name under exclusive `#[cfg]`s (one
    function for two platforms) count once."""
    found = []
    for path in source_files().values():
        code = code_of(path)
        names = set()
        for match in _ITEM.finditer(code):
            if match.group(2) not in names:
                names.add(match.group(2))
                line = code.count("\n", 0, match.start()) + 1
                found.append((match.group(2), match.group(1), path, line))
    return found
