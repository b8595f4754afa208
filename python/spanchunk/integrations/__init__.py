"""Adapters for the frameworks people already use, each an optional extra.

Import the module of your framework; nothing here imports a framework until you do:

- ``spanchunk.integrations.langchain`` (``pip install 'spanchunk[langchain]'``): a
  ``TextSplitter``, a one-pass parent/child indexer and a ``BaseStore`` over a parent store.
- ``spanchunk.integrations.llamaindex`` (``spanchunk[llamaindex]``): a ``NodeParser``.
- ``spanchunk.integrations.haystack`` (``spanchunk[haystack]``): a ``@component`` splitter.
- ``spanchunk.integrations.ray`` (``spanchunk[ray]``): a batch function for Ray Data (and
  Spark's ``mapInArrow``), with the chunk table's Arrow schema.
"""
