"""Adapters for the frameworks people already use, each an optional extra.

Import the module of your framework; nothing here imports a framework until you do:

- ``spanchunk.integrations.langchain`` (the ``langchain`` extra: ``pip install
  '.[langchain]'`` from a clone): a ``TextSplitter``, a one-pass parent/child indexer and a
  ``BaseStore`` over a parent store.
- ``spanchunk.integrations.llamaindex`` (the ``llamaindex`` extra): a ``NodeParser``.
- ``spanchunk.integrations.haystack`` (the ``haystack`` extra): a ``@component`` splitter.
- ``spanchunk.integrations.ray`` (the ``ray`` extra): a batch function for Ray Data (and
  Spark's ``mapInArrow``), with the chunk table's Arrow schema.
- ``spanchunk.integrations.vectors``: a store's change feed applied to a LangChain vector
  store, a LlamaIndex vector store or a Haystack document store.
"""
