"""How the SQLite store keeps a chunk in text columns: metadata as plain JSON, with the paths of
its tuples beside it so that it reads back exactly as it went in (tuples stay tuples, lists
lists), child ids joined in one string, and a chunk's row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from spanchunk.chunk import Chunk
from spanchunk.document import FrozenDict

__all__ = [
    "ID_SEPARATOR",
    "chunks_of",
    "decode_child_ids",
    "decode_metadata",
    "encode_child_ids",
    "encode_metadata",
    "rows_of",
]

#: Distinct metadata mappings kept decoded between reads.
METADATA_CACHE = 4096

#: A path in metadata: the keys and list positions that lead to a value.
Path = tuple[str | int, ...]


def _encode_value(value: Any, where: str, path: Path, tuples: list[Path]) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (tuple, list)):
        if isinstance(value, tuple):
            tuples.append(path)
        return [
            _encode_value(item, f"{where}[{position}]", (*path, position), tuples)
            for position, item in enumerate(value)
        ]
    if isinstance(value, Mapping):
        encoded: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"metadata{where} has the key {key!r}: a SqliteRegistry keeps mappings with "
                    "str keys; convert the key to a str"
                )
            encoded[key] = _encode_value(item, f"{where}[{key!r}]", (*path, key), tuples)
        return encoded
    raise TypeError(
        f"metadata{where} is a {type(value).__name__}, which a SqliteRegistry cannot keep: "
        "use str, int, float, bool, None, and lists, tuples and dicts of them"
    )


def _decode_value(value: Any, path: Path, tuples: frozenset[Path]) -> Any:
    if isinstance(value, list):
        items = [
            _decode_value(item, (*path, position), tuples) for position, item in enumerate(value)
        ]
        return tuple(items) if path in tuples else items
    if isinstance(value, dict):
        # Nested mappings come back in the read-only form a Document gives them.
        return FrozenDict(
            {key: _decode_value(item, (*path, key), tuples) for key, item in value.items()}
        )
    return value


def _decode_plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode_plain(item) for item in value]
    if isinstance(value, dict):
        return FrozenDict({key: _decode_plain(item) for key, item in value.items()})
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode_metadata(metadata: Mapping[str, Any]) -> tuple[str, str]:
    """One chunk's metadata as the store's two columns: plain JSON (a tuple as an array), and
    the paths of the arrays that were tuples, as a JSON array of key and position lists (empty
    when there are none). TypeError for what JSON cannot give back."""
    if not metadata:
        return "{}", ""
    tuples: list[Path] = []
    text = _json(_encode_value(metadata, "", (), tuples))
    return text, _json(tuples) if tuples else ""


ID_SEPARATOR = "\x1f"


def encode_child_ids(child_ids: tuple[str, ...]) -> str:
    """Child ids as one string: joined by the unit separator, or (for a hand-made id that
    holds one, or starts with "[") a JSON array."""
    if not child_ids:  # a leaf: most rows of a store that keeps children
        return ""
    joined = ID_SEPARATOR.join(child_ids)
    if joined.startswith("[") or joined.count(ID_SEPARATOR) != len(child_ids) - 1:
        return json.dumps(child_ids, ensure_ascii=False)
    return joined


def decode_child_ids(text: str) -> tuple[str, ...]:
    """The ids ``encode_child_ids`` was given, as the tuple ``Chunk`` keeps (a list costs the
    constructor more than the conversion here)."""
    if not text:
        return ()
    if text.startswith("["):
        return tuple(json.loads(text))
    return tuple(text.split(ID_SEPARATOR))


def decode_metadata(text: str, tuple_paths: str = "") -> MappingProxyType[str, Any]:
    """The read-only mapping ``encode_metadata`` was given: ``text``, with the arrays that
    ``tuple_paths`` names as tuples."""
    if not tuple_paths:
        return MappingProxyType(
            {key: _decode_plain(value) for key, value in json.loads(text).items()}
        )
    tuples = frozenset(tuple(path) for path in json.loads(tuple_paths))
    return MappingProxyType(
        {key: _decode_value(value, (key,), tuples) for key, value in json.loads(text).items()}
    )


def rows_of(chunks: list[Chunk]) -> list[tuple[Any, ...]]:
    """The store's rows for ``chunks``: every field, metadata as JSON (encoded once per
    mapping object: a document's chunks share one) and child ids as one string."""
    encoded: dict[int, tuple[str, str]] = {}
    rows = []
    for chunk in chunks:
        metadata = chunk.metadata
        key = id(metadata)
        columns = encoded.get(key)
        if columns is None:
            columns = encoded[key] = encode_metadata(metadata)
        rows.append(
            (
                chunk.id,
                chunk.text,
                chunk.document_id,
                chunk.index,
                chunk.level,
                chunk.start_char,
                chunk.end_char,
                chunk.start_byte,
                chunk.end_byte,
                chunk.parent_id,
                encode_child_ids(chunk.child_ids),
                *columns,
            )
        )
    return rows


def chunks_of(
    rows: list[tuple[Any, ...]], decoded: dict[tuple[str, str], MappingProxyType[str, Any]]
) -> list[Chunk]:
    """The chunks of rows ``rows_of`` made. ``decoded`` keeps decoded metadata across calls
    (it is read-only, so chunks of one document share one mapping, as the chunker's do);
    bounded, as a store can hold many."""
    if len(decoded) > METADATA_CACHE:
        decoded.clear()
    child_ids = decode_child_ids
    chunks: list[Chunk] = []
    separator = ID_SEPARATOR
    append = chunks.append
    # Unpacking each row once (one opcode) costs less than thirteen subscripts.
    for (
        chunk_id,
        text,
        document_id,
        index,
        level,
        start_char,
        end_char,
        start_byte,
        end_byte,
        parent_id,
        child_text,
        metadata_json,
        tuple_paths,
    ) in rows:
        metadata = decoded.get((metadata_json, tuple_paths))
        if metadata is None:
            metadata = decoded[metadata_json, tuple_paths] = decode_metadata(
                metadata_json, tuple_paths
            )
        if not child_text:
            children: tuple[str, ...] = ()
        elif child_text[0] == "[":
            children = child_ids(child_text)
        else:
            children = tuple(child_text.split(separator))
        append(
            Chunk(
                chunk_id,
                text,
                document_id,
                index,
                level,
                start_char,
                end_char,
                start_byte,
                end_byte,
                parent_id,
                children,
                metadata,
            )
        )
    return chunks
