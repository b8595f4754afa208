"""Parent stores: where the chunks above the leaves (and the leaves, when asked) are kept, so
hits can be swapped for their parents at query time.

- ``ParentStore`` (``protocol.py``): what the chunkers and ``spanchunk.retrieval`` ask of a
  store; write a class with its members to back one with anything else.
- ``ParentRegistry`` (``memory.py``): in memory, thread-safe.
- ``SqliteRegistry`` (``sqlite.py``, on the file handling of ``sqlite_file.py``, the format
  of ``schema.py`` and the row encoding of ``codec.py``): one SQLite file, shared by
  processes and runs.
- ``changes.py``: a SQLite store's change feed (``changes``, consumers, ``apply_changes``),
  for keeping a vector database in step with it.
- ``parents.py``: the one implementation of swapping hits for their parents, and the rules
  for a parent that is not stored, which every store's ``expand`` and
  ``spanchunk.retrieval`` share.
"""

from spanchunk.stores.changes import ChangeFeed, ChangesCompacted, Upsert, apply_changes
from spanchunk.stores.memory import ParentRegistry
from spanchunk.stores.protocol import ParentStore
from spanchunk.stores.sqlite import SqliteRegistry
from spanchunk.stores.sqlite_file import StoreFormatError

__all__ = [
    "ChangeFeed",
    "ChangesCompacted",
    "ParentRegistry",
    "ParentStore",
    "SqliteRegistry",
    "StoreFormatError",
    "Upsert",
    "apply_changes",
]
