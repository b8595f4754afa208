"""Parent stores: where the chunks above the leaves (and the leaves, when asked) are kept, so
hits can be swapped for their parents at query time.

- ``ParentStore`` (``protocol.py``): what the chunkers and ``spanchunk.retrieval`` ask of a
  store; write a class with its members to back one with anything else.
- ``ParentRegistry`` (``memory.py``): in memory, thread-safe.
- ``SqliteRegistry`` (``sqlite.py``, on the file handling of ``sqlite_file.py``, the format
  of ``schema.py`` and the row encoding of ``codec.py``): one SQLite file, shared by
  processes and runs.
- ``parents.py``: the one implementation of swapping hits for their parents, and the rules
  for a parent that is not stored, which every store's ``expand`` and
  ``spanchunk.retrieval`` share.
"""

from spanchunk.stores.memory import ParentRegistry
from spanchunk.stores.protocol import ParentStore
from spanchunk.stores.sqlite import SqliteRegistry
from spanchunk.stores.sqlite_file import StoreFormatError

__all__ = ["ParentRegistry", "ParentStore", "SqliteRegistry", "StoreFormatError"]
