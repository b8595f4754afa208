"""Chunker settings: the checks of every value, and ``Setting``, the one declaration of each.

A built-in chunker declares each of its settings once, as a ``Setting`` class attribute in the
order ``settings()`` and ``repr`` list them. The declaration holds the check that validates the
value given to ``__init__``, the read-only property, the ``settings()`` entry and the part of
the repr, so the four cannot drift apart. Checks run in the order ``__init__`` gives the
values (a check may read a setting stored before it: the unit before the sizes, a size before
its overlap), which is why the order of validation is not the order of declaration.

Every message names the setting, the value and the fix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any, Generic, Literal, TypeVar, overload

from spanchunk import _core
from spanchunk.units import Sizing, qualified_name, sizing

__all__ = [
    "DEFAULT_PAGE_PATTERN",
    "SENTENCES",
    "KeepSeparator",
    "Merge",
    "Setting",
    "UnitSetting",
    "bool_setting",
    "core_keep_separator",
    "cuts_fingerprint",
    "fingerprint_of",
    "int_setting",
    "keep_separator_setting",
    "merge_setting",
    "min_chunk_size_setting",
    "name_setting",
    "nested_settings",
    "overlap_setting",
    "positive_size",
    "separators_setting",
    "sizes_setting",
    "splitter_cut",
    "strategy_cut",
    "type_name",
    "workers_setting",
]

SENTENCES: str = _core.sentence_separator()
"""A separator level of its own that cuts at sentence boundaries (UAX #29, lone line breaks
read as spaces) instead of at a literal string: ``separators=["\n\n", SENTENCES, " "]``.
The default for ``unit="sentence"``; it works in every unit."""

KeepSeparator = Literal["end", "start", False]
"""Where a separator goes: ending the chunk before it, starting the one after, or neither."""

Merge = Literal["boundary", "greedy"]
"""How pieces are merged into a chunk: up to the coarsest boundary that fits, or greedily."""

Value = TypeVar("Value")


# --------------------------------------------------------------------------------------------
# Checks: one message style for every setting ("what, the value, the fix").


# The core counts sizes in 64-bit signed integers; nothing larger can ever be reached.
MAX_SIZE = 2**63 - 1


def int_setting(name: str, value: object, example: int) -> int:
    """``value`` as an int up to ``MAX_SIZE``; TypeError for anything else (bools included)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be an int, not {type(value).__name__} ({value!r}): "
            f"pass a whole number, e.g. {name}={example}"
        )
    if value > MAX_SIZE:
        raise ValueError(f"{name} must be at most 2**63 - 1, got {value}: pass a smaller {name}")
    return value


def positive_size(name: str, value: object, unit: str, example: int) -> int:
    """A chunk size: an int of at least 1 (at least 4 in bytes, the longest UTF-8 character)."""
    size = int_setting(name, value, example)
    if size < 1:
        raise ValueError(
            f"{name} must be at least 1, got {size}: pass a positive size, e.g. {name}={example}"
        )
    if unit == "byte" and size < 4:
        raise ValueError(
            f"{name} must be at least 4 when unit='byte' (one UTF-8 character takes up to "
            f"4 bytes), got {size}: raise {name} to 4 or more"
        )
    return size


def sizes_setting(sizes: object, unit: str) -> tuple[int, ...]:
    """The sizes of a tree's levels, top first: positive and strictly decreasing."""
    if not isinstance(sizes, (list, tuple)):
        raise TypeError(
            f"sizes must be a list of ints, top level first, not {type(sizes).__name__}: "
            "e.g. sizes=[2048, 512, 128]"
        )
    if not sizes:
        raise ValueError("sizes cannot be empty: pass one size per level, e.g. [2048, 512]")
    checked = tuple(
        positive_size(f"sizes[{position}]", size, unit, 512) for position, size in enumerate(sizes)
    )
    for above, below in pairwise(checked):
        if below >= above:
            raise ValueError(
                f"sizes must be strictly decreasing, top level first, got {list(checked)}: "
                f"list the largest size first, e.g. sizes={sorted(set(checked), reverse=True)}"
            )
    return checked


def overlap_setting(name: str, value: object, limit_name: str, limit: int) -> int:
    """An overlap: None (0) or an int from 0 to below ``limit``."""
    if value is None:
        return 0
    overlap = int_setting(name, value, 0)
    if overlap < 0:
        raise ValueError(f"{name} must be 0 or more, got {overlap}: pass {name}=0 for no overlap")
    if overlap >= limit:
        raise ValueError(
            f"{name} ({overlap}) must be smaller than {limit_name} ({limit}): "
            f"lower {name} or raise {limit_name}"
        )
    return overlap


def min_chunk_size_setting(value: object, chunk_size: int) -> int:
    """A min_chunk_size: an int from 0 to ``chunk_size``."""
    size = int_setting("min_chunk_size", value, 0)
    if size < 0:
        raise ValueError(
            f"min_chunk_size must be 0 or more, got {size}: pass min_chunk_size=0 to join nothing"
        )
    if size > chunk_size:
        raise ValueError(
            f"min_chunk_size ({size}) must not exceed chunk_size ({chunk_size}): "
            "lower min_chunk_size or raise chunk_size"
        )
    return size


def separators_setting(separators: object) -> list[list[str]] | None:
    """Separator levels, coarsest first, each a list of alternatives; None for the defaults."""
    if separators is None:
        return None
    if not isinstance(separators, (list, tuple)):
        raise TypeError(
            f"separators must be a list of str (or of lists of str), not "
            f"{type(separators).__name__}: e.g. separators=['\\n\\n', '\\n', ' ']"
        )
    levels: list[list[str]] = []
    for position, item in enumerate(separators):
        if isinstance(item, str):
            alternatives = [item]
        elif isinstance(item, (list, tuple)) and all(isinstance(each, str) for each in item):
            alternatives = list(item)
        else:
            raise TypeError(
                f"separators[{position}] must be a str or a list of str (alternatives at one "
                f"level), not {type(item).__name__}"
            )
        if not alternatives:
            raise ValueError(
                f"separators[{position}] is an empty list: give it at least one separator "
                "or remove it"
            )
        if "" in alternatives:
            raise ValueError(
                f"separators[{position}] contains an empty string: separators must be "
                "non-empty (cuts between graphemes and code points are always the last resort)"
            )
        levels.append(alternatives)
    return levels


def keep_separator_setting(keep_separator: object) -> KeepSeparator:
    """``"end"``, ``"start"`` or ``False``, as given."""
    if keep_separator is False or (
        isinstance(keep_separator, str) and keep_separator in ("end", "start")
    ):
        return keep_separator  # type: ignore[return-value]
    raise ValueError(
        f"keep_separator must be 'end' (the separator ends the previous chunk), 'start' "
        f"(it begins the next) or False (its whitespace is kept off chunk edges, its other "
        f"characters stay with the chunk before; nothing is dropped), got {keep_separator!r}"
    )


def core_keep_separator(keep_separator: KeepSeparator) -> str:
    """The core's name for a keep_separator choice ("end", "start" or "none")."""
    return "none" if keep_separator is False else keep_separator


def merge_setting(merge: object) -> Merge:
    """``"boundary"`` (chunks end at the coarsest separator that fits) or ``"greedy"``."""
    if isinstance(merge, str) and merge in ("boundary", "greedy"):
        return merge  # type: ignore[return-value]
    raise ValueError(
        f"merge must be 'boundary' (a chunk holds whole pieces of the coarsest separator "
        f"level that fits, and ends there) or 'greedy' (a chunk takes pieces of any level "
        f"while they fit), got {merge!r}"
    )


#: The page markers every chunker recognises by default (``pages=True``), a regular
#: expression: form feeds, an HTML comment saying "page break" or naming the page, pymupdf4llm's
#: ``--- end of page=N ---`` and marker's ``{N}`` and 48 dashes (see ``docs/pages.md``).
DEFAULT_PAGE_PATTERN: str = _core.DEFAULT_PAGE_PATTERN


def pages_setting(value: object) -> bool | str:
    """Page markers: True (the default markers, ``DEFAULT_PAGE_PATTERN``), False (none), or a
    regular expression of one's own (compiled by the core, which refuses a bad one)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value:
        return value
    if isinstance(value, str):
        raise ValueError(
            "pages must not be empty: give a regular expression that matches a page marker, "
            "True for the default markers, or False for none"
        )
    raise TypeError(
        "pages must be True (the default page markers), False (none) or a regular "
        f"expression as a str, not {type(value).__name__}"
    )


def core_pages(value: bool | str) -> str | None:
    """The core's page marker pattern of a ``pages`` setting (None: no pages)."""
    if value is True:
        return DEFAULT_PAGE_PATTERN
    if value is False:
        return None
    return value


def bool_setting(name: str, value: object) -> bool:
    """A flag: True or False, nothing else."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def name_setting(value: object) -> str | None:
    """A chunker's label: a str or None."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"name must be a str or None, not {type(value).__name__}")
    return value


def workers_setting(workers: object) -> int | None:
    """A thread count: None (every core) or an int of at least 1."""
    if workers is None:
        return None
    count = int_setting("workers", workers, 4)
    if count < 1:
        raise ValueError(f"workers must be at least 1, got {count}: pass None to use every core")
    return count


# --------------------------------------------------------------------------------------------
# Identity: the "type" setting, nested settings and the fingerprint.


def type_name(chunker: object, built_in: type) -> str:
    """The "type" setting: the built-in's name, or a subclass's qualified name (what the
    settings show; the fingerprint names a class only when it cuts in Python, see
    ``strategy_cut``)."""
    cls = type(chunker)
    if cls is built_in:
        return built_in.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


# Settings that change neither spans nor ids: a label, and what rides in a chunk's metadata.
NOT_FINGERPRINTED = frozenset({"name", "parent_content"})


def fingerprint_of(settings: Mapping[str, Any]) -> str:
    """16 hex digits of sha256 over the settings (less ``NOT_FINGERPRINTED``) as canonical
    JSON."""
    payload = {key: value for key, value in settings.items() if key not in NOT_FINGERPRINTED}
    try:
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise TypeError(f"settings() must return a JSON-safe dict: {error}") from None
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def splitter_cut(splitter: _core.Splitter, units: Sizing) -> dict[str, Any]:
    """What a built-in level cuts by: everything its core ``Splitter`` was built from.

    Read back from the Splitter, not from the chunker that made it, so that two levels
    built alike (``separators=None`` and the same defaults given, ``keep_separator=False``
    and ``"none"``, a ``RecursiveChunker`` and a tree's default level) are described alike.
    The Splitter does not say which tokenizer it counts with, so the unit comes from
    ``units``, the ``Sizing`` it was built from: a tokenizer by the hash of its content
    (ids agree across machines), a length_function by its qualified name.

    Args:
        splitter: The level.
        units: The unit the level was built with.

    Returns:
        A JSON-safe dict with one key per argument of ``_core.Splitter``.
    """
    return {
        "chunk_size": splitter.chunk_size,
        "overlap": splitter.overlap,
        "min_chunk_size": splitter.min_chunk_size,
        "separators": splitter.separators,
        "keep_separator": splitter.keep_separator,
        "trim": splitter.trim,
        "structure": splitter.structure,
        "merge": splitter.merge,
        "tokenizer": None,
        "length_function": None,
        **units.settings(),
        # Code only (the cut of every other level reads as it always has).
        **({"language": splitter.language} if splitter.structure == "code" else {}),
        **({"html_content": splitter.html_content} if splitter.structure == "html" else {}),
    }


# What a custom strategy's settings() holds besides what decides its cut: its class (named
# apart, as the strategy) and what changes neither spans nor ids.
_NOT_CUT = NOT_FINGERPRINTED | {"type"}


def strategy_cut(chunker: Any) -> dict[str, Any]:
    """What a level cut in Python (``split_spans`` or ``split_text``) cuts by: its class's
    qualified name and its own ``settings()`` (less its type, ``name`` and
    ``parent_content``), since nothing else is known of what its code does."""
    settings = chunker.settings()
    return {
        "strategy": qualified_name(type(chunker)),
        "settings": {key: value for key, value in settings.items() if key not in _NOT_CUT},
    }


def cuts_fingerprint(cuts: Sequence[Mapping[str, Any]]) -> str:
    """A chunker's fingerprint: ``fingerprint_of`` the cut of each of its levels, top first
    (``splitter_cut``, ``strategy_cut``), so that chunkers that cut alike share chunk ids
    whatever class holds their settings."""
    return fingerprint_of({"levels": list(cuts)})


def nested_settings(chunker: Any) -> dict[str, Any] | None:
    """A nested chunker's settings without its "name" (a label never changes the ids)."""
    if chunker is None:
        return None
    return {key: value for key, value in chunker.settings().items() if key != "name"}


# --------------------------------------------------------------------------------------------
# The declaration.


def _always(_stored: object) -> bool:
    return True


class Setting(Generic[Value]):
    """One setting of a chunker: its check, read-only property, ``settings()`` entry and repr.

    The checked value is stored on the chunker as ``_<name>`` (or ``attribute``). Reading the
    class attribute from an instance gives the property's value; assigning to it raises
    ``AttributeError``, as a read-only property does.

    Args:
        doc: The property's docstring.
        check: ``(chunker, given) -> stored``: validates the value given to ``__init__``; it
            may read the settings stored before it.
        read: ``chunker -> value`` of the property (default: the stored value).
        entry: ``chunker -> value`` of the ``settings()`` entry (default: the property's).
        shown: ``stored -> bool``: whether the repr names the setting (default: always; a
            setting at its default value is left out).
        text: ``stored -> str`` in the repr (default: ``repr``).
        attribute: Where the stored value lives (default: ``_<name>``).
    """

    name: str
    attribute: str

    def __init__(
        self,
        doc: str,
        *,
        check: Callable[[Any, Any], Any],
        read: Callable[[Any], Value] | None = None,
        entry: Callable[[Any], Any] | None = None,
        shown: Callable[[Any], bool] = _always,
        text: Callable[[Any], str] = repr,
        attribute: str | None = None,
    ) -> None:
        self.__doc__ = doc
        self._check = check
        self._read = read
        self._entry = entry
        self._shown = shown
        self._text = text
        if attribute is not None:
            self.attribute = attribute

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        if not hasattr(self, "attribute"):
            self.attribute = f"_{name}"

    @overload
    def __get__(self, chunker: None, owner: type | None = None) -> Setting[Value]: ...
    @overload
    def __get__(self, chunker: object, owner: type | None = None) -> Value: ...
    def __get__(self, chunker: object, owner: type | None = None) -> Value | Setting[Value]:
        if chunker is None:
            return self
        if self._read is not None:
            return self._read(chunker)
        return getattr(chunker, self.attribute)  # type: ignore[no-any-return]

    def __set__(self, chunker: object, value: object) -> None:
        raise AttributeError(
            f"{self.name!r} of {type(chunker).__name__!r} is read-only: make a new chunker "
            "with the setting you want"
        )

    def store(self, chunker: object, given: object) -> None:
        """Checks ``given`` and stores it on ``chunker``."""
        setattr(chunker, self.attribute, self._check(chunker, given))

    def entries(self, chunker: object) -> Iterable[tuple[str, Any]]:
        """The setting's ``settings()`` entries (one, for every setting but the unit)."""
        if self._entry is not None:
            return ((self.name, self._entry(chunker)),)
        return ((self.name, self.__get__(chunker)),)

    def repr_part(self, chunker: object) -> str | None:
        """``name=value`` for the repr, or None when the setting is left out."""
        stored = getattr(chunker, self.attribute)
        if not self._shown(stored):
            return None
        return f"{self.name}={self._text(stored)}"


def _unit_of(chunker: Any) -> str:
    return chunker._sizing.unit  # type: ignore[no-any-return]


def _check_sizing(_chunker: object, given: tuple[object, object, object, object]) -> Sizing:
    return sizing(*given)


class UnitSetting(Setting[str]):
    """The size unit: ``unit`` with ``encoding``, ``tokenizer`` and ``length_function``.

    The four are checked together (``_tokens.sizing``, given as a tuple, in that order) and
    stored as one ``Sizing`` in ``_sizing``; the property is the unit's name, the
    ``settings()`` entries are the unit's (``unit``, ``encoding`` and, when given,
    ``tokenizer`` or ``length_function``), and the repr names the unit when it is not chars.
    """

    def __init__(self, doc: str) -> None:
        super().__init__(
            doc,
            check=_check_sizing,
            read=_unit_of,
            shown=lambda units: units.unit != "char",
            text=lambda units: repr(units.unit),
            attribute="_sizing",
        )

    def entries(self, chunker: object) -> Iterable[tuple[str, Any]]:
        """Every key of the unit's settings."""
        units: Sizing = getattr(chunker, self.attribute)
        return units.settings().items()


class FlagSetting(Setting[bool]):
    """A bool option, off by default, listed in ``settings()`` and the repr only when on (so
    the settings of a chunker that leaves it off read as they did before the option)."""

    def __init__(self, doc: str) -> None:
        super().__init__(doc, check=self._check_flag, shown=bool)

    def _check_flag(self, _chunker: object, value: object) -> bool:
        return bool_setting(self.name, value)

    def entries(self, chunker: object) -> Iterable[tuple[str, Any]]:
        """``(name, True)`` when on; nothing when off."""
        return ((self.name, True),) if getattr(chunker, self.attribute) else ()


class OptionalSetting(Setting[Any]):
    """A setting that is None by default, listed in ``settings()`` and the repr only when
    given (so the settings of a chunker that leaves it out read as they did before it)."""

    def entries(self, chunker: object) -> Iterable[tuple[str, Any]]:
        """``(name, value)`` when given; nothing when None."""
        value = self.__get__(chunker)
        return () if value is None else ((self.name, value),)
