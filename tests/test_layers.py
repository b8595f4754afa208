"""The package's layers (the docstring of ``spanchunk/__init__.py``): every import, wherever
it stands in a module (lazy and type-checking imports included), goes to the importing
module's own layer or a lower one; no name with a leading underscore is imported from
another layer (``_core``, the extension every layer calls, aside), nor reached as an
attribute (``store._write()``: a member with a leading underscore that only another layer
defines); no two modules import each other, however indirectly; and no module passes about
600 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import spanchunk

PACKAGE = Path(spanchunk.__file__).resolve().parent

#: Lowest first: a module may import its own layer and those before it.
LAYERS = {
    "spanchunk._core": 0,
    "spanchunk.chunk": 0,
    "spanchunk.document": 0,
    "spanchunk.errors": 0,
    "spanchunk.units": 0,
    "spanchunk.arrow": 0,
    "spanchunk.stores": 1,
    "spanchunk.retrieval": 2,
    "spanchunk.chunkers": 3,
    # The public names: all of them from the layers up to the chunkers.
    "spanchunk": 3,
    "spanchunk.ingest": 4,
    "spanchunk.batch": 5,
    "spanchunk.cli": 5,
    "spanchunk.integrations": 5,
    "spanchunk.__main__": 6,
}
#: Layer 5's parts are side by side: none imports another.
APART = ("spanchunk.batch", "spanchunk.cli", "spanchunk.integrations")
MAX_LINES = 620


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def part_of(name: str) -> str:
    """The entry of ``LAYERS`` a module belongs to (the longest prefix)."""
    matches = [part for part in LAYERS if name == part or name.startswith(part + ".")]
    return max(matches, key=len)


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import of spanchunk's."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            names = [alias.name for alias in node.names]
            submodules = [n for n in names if f"{base}.{n}" in known]
            found += [(f"{base}.{n}", [], node.lineno) for n in submodules]
            rest = [n for n in names if n not in submodules]
            if rest or not submodules:
                found.append((base, rest, node.lineno))
    return [item for item in found if item[0].split(".")[0] == "spanchunk"]


def graph() -> dict[str, set[str]]:
    known = set(modules())
    return {
        name: {target for target, _, _ in imports(name, path, known) if target in known}
        for name, path in modules().items()
    }


def test_every_import_goes_to_the_same_layer_or_a_lower_one() -> None:
    known = set(modules()) | {"spanchunk._core"}
    wrong = []
    for name, path in modules().items():
        own = part_of(name)
        for target, names, line in imports(name, path, known):
            other = part_of(target)
            if LAYERS[other] > LAYERS[own]:
                wrong.append(f"{name}:{line} imports {target} (a higher layer)")
            elif other != own and own in APART and other in APART:
                wrong.append(f"{name}:{line} imports {target} (a part beside it)")
            elif other != own and target != "spanchunk._core":
                private = [n for n in names if n.startswith("_") and n != "_core"]
                hidden = [p for p in target.split(".")[1:] if p.startswith("_") and p != "_core"]
                if private or hidden:
                    wrong.append(f"{name}:{line} imports {target}: {private or hidden} (private)")
    assert not wrong, "\n".join(wrong)


def private_members(tree: ast.AST) -> set[str]:
    """The names with one leading underscore that a module defines as members: methods and
    attributes of its classes (``def _x``, ``_x = ...`` in a class body, ``self._x = ...``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.add(item.name)
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    found.update(t.id for t in targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            found.add(node.attr)
    return {name for name in found if name.startswith("_") and not name.startswith("__")}


def test_no_underscored_member_of_another_layer_is_reached() -> None:
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules().items()}
    defined: dict[str, set[str]] = {}
    for name, tree in trees.items():
        for member in private_members(tree):
            defined.setdefault(member, set()).add(part_of(name))
    wrong = []
    for name, tree in trees.items():
        own = part_of(name)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in defined:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if own not in defined[node.attr]:
                where = ", ".join(sorted(defined[node.attr]))
                wrong.append(f"{name}:{node.lineno} reaches {node.attr} (defined in {where})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle() -> None:
    edges = graph()
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> None:
        if name in path:
            circle = [*path[path.index(name) :], name]
            raise AssertionError("an import circle: " + " -> ".join(circle))
        if name in done:
            return
        path.append(name)
        for target in sorted(edges[name]):
            # A package's __init__ re-exports its modules: importing them is not a circle
            # when they import a sibling through the package's name.
            if name.startswith(target + "."):
                continue
            visit(target)
        path.pop()
        done.add(name)

    for name in sorted(edges):
        visit(name)


def test_no_module_over_about_600_lines() -> None:
    long = {
        name: count
        for name, path in modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_every_sql_statement_is_the_stores() -> None:
    """A store owns its file: no module outside ``spanchunk.stores`` holds SQL."""
    import re  # noqa: PLC0415

    statement = re.compile(
        r"\b(SELECT .* FROM|INSERT (OR \w+ )?INTO|DELETE FROM|UPDATE \w+ SET|CREATE "
        r"(TABLE|INDEX|TRIGGER)|PRAGMA \w+)\b"
    )
    found = []
    for name, path in modules().items():
        if part_of(name) == "spanchunk.stores":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and statement.search(node.value)
            ):
                found.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
    assert not found, "\n".join(found)
