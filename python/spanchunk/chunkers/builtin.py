"""``BuiltInChunker``: what the built-in chunkers share (settings declared once, a cached
fingerprint, pickling without the core's objects); not a class to subclass outside spanchunk.
"""

from __future__ import annotations

from typing import Any, ClassVar

from spanchunk import _core
from spanchunk.chunkers.base import Chunker, cuts_in_python
from spanchunk.chunkers.settings import Setting, cuts_fingerprint, type_name
from spanchunk.chunkers.spans import all_built_in
from spanchunk.units import Sizing

__all__ = ["BuiltInChunker"]


class BuiltInChunker(Chunker):
    """Shared by the built-in chunkers: settings declared once (``Setting`` class attributes,
    in the order ``settings()`` and the repr list them), a cached fingerprint, and pickling
    without the core's Splitter objects (which do not pickle), rebuilt from the settings.

    A class that declares settings lists only its own; one that declares none (a user's
    subclass, ``MarkdownChunker``) keeps its parent's. ``built_in=True`` in the class
    statement marks a public built-in: its ``"type"`` setting is its bare name, a subclass's
    is the subclass's qualified name.
    """

    _TRANSIENT: ClassVar[tuple[str, ...]] = ("_tree",)
    _SETTINGS: ClassVar[tuple[Setting[Any], ...]] = ()
    _KIND: ClassVar[type[Chunker]]
    _cached_fingerprint: str
    _sizing: Sizing

    def __init_subclass__(cls, *, built_in: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = tuple(value for value in vars(cls).values() if isinstance(value, Setting))
        if declared:
            cls._SETTINGS = declared
        if built_in:
            cls._KIND = cls

    def _configure(self, **given: object) -> None:
        """Checks and stores settings in the order given: a check may read those before it."""
        cls = type(self)
        for name, value in given.items():
            setting: Setting[Any] = getattr(cls, name)
            setting.store(self, value)

    def _rebuild(self) -> None:
        raise NotImplementedError

    def _built_in_cuts(self) -> list[dict[str, Any]]:
        """What each built-in level cuts by, top first (``splitter_cut``, ``level_cut``)."""
        raise NotImplementedError

    def _cuts(self) -> list[dict[str, Any]]:
        if cuts_in_python(type(self)):
            return super()._cuts()
        return self._built_in_cuts()

    def _build_tree(self) -> None:
        """Hands the levels to the core once, when every one is built in (see ``spans``), and
        fingerprints them: ``fingerprint`` is read per batch, so it is computed once here."""
        levels = self._levels()
        self._tree = _core.Tree(levels) if all_built_in(levels) else None
        self._cached_fingerprint = cuts_fingerprint(self._cuts())

    @property
    def encoding(self) -> str | None:
        """The tiktoken encoding of token units (None otherwise)."""
        return self._sizing.encoding

    def settings(self) -> dict[str, Any]:
        """Every setting as a JSON-safe dict with a ``"type"`` key; a nested chunker appears
        as its own settings (without its ``name``)."""
        entries: dict[str, Any] = {"type": type_name(self, self._KIND)}
        for setting in self._SETTINGS:
            entries.update(setting.entries(self))
        return entries

    def fingerprint(self) -> str:
        """16 hex digits identifying the cut (see ``Chunker.fingerprint``); part of every
        chunk id."""
        return self._cached_fingerprint

    def __repr__(self) -> str:
        parts = [part for setting in self._SETTINGS if (part := setting.repr_part(self))]
        return f"{type(self).__name__}({', '.join(parts)})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in self._TRANSIENT:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._rebuild()
