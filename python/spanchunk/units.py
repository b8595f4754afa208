"""Size units: the validation of ``unit``, ``encoding``, ``tokenizer`` and ``length_function``,
shared by every built-in chunker and by the retrieval helpers' budgets, and the identity of a
tokenizer in ``settings()``.

``unit`` means one thing everywhere in spanchunk: what a size is counted in, a chunk's size
or a context budget alike, with the same names (``UNITS``) and the same companions
(``encoding``, ``tokenizer``, ``length_function`` for ``unit="token"``).

Counting happens in the Rust core: tiktoken encodings are compiled in (nothing is downloaded),
a HuggingFace ``tokenizer.json`` is loaded from its JSON text (truncation and padding off,
special tokens not counted). A ``length_function`` is a Python callable the core calls for
every measurement, holding the GIL: the slow path.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any, Literal

from spanchunk import _core

ENCODINGS = ("o200k_base", "cl100k_base", "p50k_base", "r50k_base")
"""The tiktoken encodings compiled into the core."""

UNITS = ("char", "byte", "token", "word", "sentence", "passage", "page")
"""Every unit a size can be counted in: a chunk's size or a context budget alike."""

Unit = Literal["char", "byte", "token", "word", "sentence", "passage", "page"]
"""``UNITS``, as a type."""


class _Record:
    """A small immutable record compared and hashed by its fields (``_FIELDS``).

    Written by hand, not as a frozen dataclass: ``dataclasses`` (with ``inspect``) and the
    two classes cost 15-20 ms of every run's startup, and nothing else on the command
    line's path needs them.
    """

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._values() == other._values())

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._values())


class LoadedTokenizer(_Record):
    """A HuggingFace tokenizer's JSON text, where it came from, and its content hash."""

    __slots__ = ("digest", "json", "source")
    _FIELDS = ("json", "source", "digest")
    json: str
    source: str
    digest: str

    def __init__(self, json: str, source: str, digest: str) -> None:
        object.__setattr__(self, "json", json)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "digest", digest)

    def __repr__(self) -> str:  # not the JSON: it can be megabytes
        return f"LoadedTokenizer(source={self.source!r}, digest={self.digest!r})"

    @classmethod
    def load(cls, tokenizer: object) -> LoadedTokenizer:
        """Reads a ``tokenizer.json`` path, or takes a ``tokenizers.Tokenizer``'s JSON."""
        if isinstance(tokenizer, LoadedTokenizer):
            return tokenizer
        if isinstance(tokenizer, (str, os.PathLike)):
            from pathlib import Path  # noqa: PLC0415

            path = Path(tokenizer)
            if not path.is_file():
                raise ValueError(
                    f"tokenizer={str(tokenizer)!r} does not exist (or is not a file): pass the "
                    "path of a HuggingFace tokenizer.json"
                )
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise ValueError(
                    f"tokenizer={str(tokenizer)!r} cannot be read ({error}): pass the path of a "
                    "HuggingFace tokenizer.json"
                ) from None
            source = str(tokenizer)
        elif callable(getattr(tokenizer, "to_str", None)):
            text = tokenizer.to_str()  # type: ignore[attr-defined]
            if not isinstance(text, str):
                raise TypeError("tokenizer.to_str() must return the tokenizer's JSON as a str")
            source = f"<{type(tokenizer).__module__}.{type(tokenizer).__qualname__}>"
        else:
            raise TypeError(
                f"tokenizer must be a path to a tokenizer.json or a tokenizers.Tokenizer, not "
                f"{type(tokenizer).__name__}"
            )
        try:
            _core.Splitter(1, unit="token", tokenizer_json=text)
        except ValueError as error:
            raise ValueError(
                f"tokenizer={source!r} is not a HuggingFace tokenizer.json: {error}"
            ) from None
        return cls(json=text, source=source, digest=_digest(text))


def _digest(text: str) -> str:
    """16 hex digits of the tokenizer's content, as counted: key order, spacing, truncation
    and padding (switched off for counting) do not change it, so a tokenizer.json and the
    same ``tokenizers.Tokenizer`` object agree."""
    try:
        content = json.loads(text)
    except ValueError:
        content = None
    if isinstance(content, dict):
        content = {key: value for key, value in content.items() if key not in _IGNORED}
        text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


_IGNORED = ("truncation", "padding")


class Sizing(_Record):
    """The unit of one chunker, validated; ``core`` gives the core Splitter's arguments."""

    __slots__ = ("encoding", "length_function", "tokenizer", "unit")
    _FIELDS = ("unit", "encoding", "tokenizer", "length_function")
    unit: str
    encoding: str | None
    tokenizer: LoadedTokenizer | None
    length_function: Callable[[str], int] | None

    def __init__(
        self,
        unit: str,
        encoding: str | None = None,
        tokenizer: LoadedTokenizer | None = None,
        length_function: Callable[[str], int] | None = None,
    ) -> None:
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "encoding", encoding)
        object.__setattr__(self, "tokenizer", tokenizer)
        object.__setattr__(self, "length_function", length_function)

    def __repr__(self) -> str:
        return (
            f"Sizing(unit={self.unit!r}, encoding={self.encoding!r}, "
            f"tokenizer={self.tokenizer!r}, length_function={self.length_function!r})"
        )

    def core(self) -> dict[str, Any]:
        """Keyword arguments of ``_core.Splitter`` for this unit."""
        return {
            "unit": self.unit,
            "encoding": self.encoding,
            "tokenizer_json": None if self.tokenizer is None else self.tokenizer.json,
            "length_function": self.length_function,
        }

    def settings(self) -> dict[str, Any]:
        """The unit's part of ``settings()``. A tokenizer is named by the hash of its
        content (not its path, so ids agree across machines), a length_function by its
        qualified name. Absent for char and byte units, whose settings predate tokens."""
        extra: dict[str, Any] = {"unit": self.unit, "encoding": self.encoding}
        if self.tokenizer is not None:
            extra["tokenizer"] = f"sha256:{self.tokenizer.digest}"
        if self.length_function is not None:
            extra["length_function"] = qualified_name(self.length_function)
        return extra

    def __reduce__(self) -> tuple[Any, ...]:
        if self.length_function is not None:
            import pickle  # noqa: PLC0415

            try:
                pickle.dumps(self.length_function)
            except Exception as error:
                raise pickle.PicklingError(
                    f"length_function {qualified_name(self.length_function)} cannot be "
                    f"pickled ({error}): define it at module level (not a lambda or a local "
                    "function) to pickle this chunker"
                ) from None
        return super().__reduce__()


# multiprocessing loads a parent's main module in a spawn (or forkserver) worker as
# "__mp_main__": the same function, so the same name, or its chunks would get other ids there.
_MAIN_MODULE_ALIASES = {"__mp_main__": "__main__"}


def qualified_name(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None) or type(function).__module__
    module = _MAIN_MODULE_ALIASES.get(module, module)
    name = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{name}"


def sizing(
    unit: object,
    encoding: object = None,
    tokenizer: object = None,
    length_function: object = None,
) -> Sizing:
    """Validates a chunker's unit settings; the messages name the setting and the fix."""
    if not isinstance(unit, str) or unit not in UNITS:
        raise ValueError(
            f"unknown unit {unit!r}: use unit='char' (code points), unit='byte' (UTF-8 bytes), "
            "unit='token' (with encoding=, tokenizer= or length_function=), or one of Haystack's "
            "split_by units: 'word', 'sentence', 'passage', 'page'"
        )
    given = {
        name: value
        for name, value in (
            ("encoding", encoding),
            ("tokenizer", tokenizer),
            ("length_function", length_function),
        )
        if value is not None
    }
    if unit != "token":
        if given:
            name, value = next(iter(given.items()))
            raise ValueError(
                f"{name}={value!r} applies to unit='token' only, not unit={unit!r}: pass "
                f"unit='token' to count tokens, or drop {name}"
            )
        return Sizing(unit)
    if len(given) != 1:
        named = ", ".join(given) if given else "none"
        raise ValueError(
            f"unit='token' needs exactly one of encoding (a tiktoken encoding, e.g. "
            f"'o200k_base'), tokenizer (a tokenizer.json path) or length_function; got {named}"
        )
    if encoding is not None:
        if encoding not in ENCODINGS:
            raise ValueError(
                f"unknown encoding {encoding!r}: use one of {', '.join(map(repr, ENCODINGS))}"
            )
        return Sizing(unit, encoding=str(encoding))
    if tokenizer is not None:
        return Sizing(unit, tokenizer=LoadedTokenizer.load(tokenizer))
    if not callable(length_function):
        raise TypeError(
            f"length_function must be a callable str -> int, not {type(length_function).__name__}"
        )
    return Sizing(unit, length_function=length_function)


#: The tiktoken encoding a budget in tokens is counted in when none is named.
DEFAULT_BUDGET_ENCODING = "cl100k_base"


def measurer(
    unit: object,
    encoding: object = None,
    tokenizer: object = None,
    length_function: object = None,
    *,
    where: str,
) -> Callable[[str], int]:
    """The function that counts a text's size in ``unit``, for a retrieval helper's budget.

    The units and their companions are the chunkers' (see ``sizing``); ``unit="token"``
    with no tokenizer named counts cl100k_base tokens. ``where`` names the function in
    the error for a function given as the unit (it goes in ``length_function``).
    """
    if callable(unit):
        raise TypeError(
            f"{where}: unit is a unit name, as for the chunkers ('char', 'byte', 'token', "
            "'word', 'sentence', 'passage', 'page'), not a function: pass a function that "
            "measures text as unit='token', length_function=..."
        )
    if unit == "token" and encoding is None and tokenizer is None and length_function is None:
        encoding = DEFAULT_BUDGET_ENCODING
    units = sizing(unit, encoding, tokenizer, length_function)
    # The size is unused: only measure is.
    return _core.Splitter(4, **units.core()).measure
