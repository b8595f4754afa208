"""Reading files as text: the one reading path of every output, and the one document id.

A file is read whole, in binary, with its state (``os.fstat``) before and after: a file
that changed while it was read is skipped (run again). A file is binary, as git decides,
when its first 8 KB hold a NUL byte, unless they start with a UTF-16 or UTF-32 byte order
mark (such text is decoded); a binary file is read no further than those 8 KB. Text is
strict UTF-8 (a byte order mark and line ends kept, so offsets are offsets into the file's
text), UTF-16 or UTF-32 by a byte order mark, or any Python codec named by ``encoding``
(the command line's ``--input-encoding``), decoded here and cut as UTF-8.

The core reads the files of the JSON Lines and Parquet outputs itself (``_core.write_files``,
the same rules, ``rust/text/decode.rs``), with the GIL released; every other reader (a store,
``read_document``, stdin, ``--input-encoding``) calls :func:`read_source` here.
"""

from __future__ import annotations

import hashlib
import os
from typing import NamedTuple

from spanchunk import _core
from spanchunk.document import Document
from spanchunk.ingest.files import BINARY, CHANGED, NOT_UTF8, UNREADABLE, File

__all__ = [
    "BINARY_MESSAGE",
    "BINARY_PROBE",
    "Skip",
    "binary_start",
    "content_hash",
    "decode_input",
    "document_id",
    "read_document",
    "read_source",
]

#: How much of a file's start decides whether it is binary.
BINARY_PROBE = 8192
BINARY_MESSAGE = "binary (a NUL byte in the first 8 KB)"

#: Byte order marks of the wide encodings, and the codec that keeps the mark as U+FEFF
#: (UTF-32's first: UTF-32LE's mark starts with UTF-16LE's).
_WIDE_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


class Skip(NamedTuple):
    """Why a file is not chunked: its path, the kind a report counts it as, the message."""

    path: str
    kind: str
    message: str


def document_id(path: str | os.PathLike[str]) -> str:
    """The document id of a file, in every output (JSON Lines, Parquet, a store, ``sync``,
    ``read_document``): its resolved path (absolute, every symbolic link resolved).

    So ``./docs/a.md``, ``docs/a.md`` and ``../x/docs/a.md`` are one document whatever the
    working directory, the same file gets the same chunk ids in every output, and two files
    with the same text are two documents. Moving or renaming a file (or a folder above it)
    changes its id.

    Example:
        >>> import os
        >>> document_id("docs/../README.md") == os.path.realpath("README.md")
        True
    """
    return os.path.realpath(path)


def content_hash(data: bytes) -> str:
    """What a store records of a file's bytes to tell, next time, that it is unchanged:
    SHA-256 in hex (OpenSSL's, with the CPU's SHA instructions: four times BLAKE2b's speed;
    hashlib releases the GIL while it hashes)."""
    return hashlib.sha256(data).hexdigest()


def binary_start(head: bytes, encoding: str | None = None) -> bool:
    """Whether a file whose first bytes are ``head`` is binary, for every output alike: the
    core's rule (a NUL byte in the first ``BINARY_PROBE`` bytes, unless a UTF-16 or UTF-32
    byte order mark starts them), except that text of a wide ``encoding`` (UTF-16, UTF-32:
    full of NUL bytes) never is."""
    if encoding is not None and encoding.lower().replace("_", "-").startswith(
        ("utf-16", "utf-32", "utf16", "utf32")
    ):
        return False
    return _core.is_binary(head[:BINARY_PROBE])


def decode_input(data: bytes, encoding: str) -> bytes | str:
    """``data`` decoded from ``encoding`` and encoded as UTF-8 (what the core cuts), or the
    message saying why it cannot be."""
    try:
        return data.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as error:
        return f"not {encoding} (byte 0x{data[error.start]:02x} at offset {error.start})"
    except UnicodeEncodeError as error:  # a decoder that made lone surrogates
        return f"not {encoding} (it decodes to a lone surrogate at char {error.start})"


def read_source(
    file: File, encoding: str | None = None
) -> tuple[bytes, os.stat_result | None] | Skip:
    """A file's bytes as the core cuts them (UTF-8, or decoded from ``encoding`` into
    UTF-8) and its state when they were read; or why it is skipped: unreadable, changed
    while read, binary, or not text in ``encoding``. A binary file is read no further than
    its first ``BINARY_PROBE`` bytes. Stdin's document has its bytes already, and no
    state."""
    if file.data is not None:
        read: tuple[bytes, os.stat_result | None] | Skip = (file.data, None)
        if binary_start(file.data, encoding):
            read = Skip(file.path, BINARY, BINARY_MESSAGE)
    else:
        read = _read_file(file.path, encoding)
    if encoding is None or isinstance(read, Skip):
        return read
    decoded = decode_input(read[0], encoding)
    if isinstance(decoded, str):
        return Skip(file.path, NOT_UTF8, decoded)
    return decoded, read[1]


def _read_file(path: str, encoding: str | None) -> tuple[bytes, os.stat_result] | Skip:
    """A file's bytes and its state before they were read, or why it is skipped."""
    try:
        with open(path, "rb") as handle:
            before = os.fstat(handle.fileno())
            head = handle.read(BINARY_PROBE)
            if binary_start(head, encoding):
                return Skip(path, BINARY, BINARY_MESSAGE)
            rest = handle.read()
            after = os.fstat(handle.fileno())
    except OSError as error:
        return Skip(path, UNREADABLE, error.strerror or str(error))
    data = head + rest if rest else head
    if (
        before.st_size != after.st_size
        or before.st_mtime_ns != after.st_mtime_ns
        or len(data) != after.st_size
    ):
        return Skip(path, CHANGED, "the file changed while it was read; run again")
    return data, before


def read_document(
    path: str | os.PathLike[str], *, encoding: str | None = None, metadata: object = None
) -> Document:
    """A file as a ``Document``, read as every output of ``spanchunk`` reads files: its id
    is :func:`document_id` (so its chunk ids are those of the command line's outputs and of
    :func:`~spanchunk.ingest.sync`, with the same settings) and its ``source`` the path as
    given (which tells a code chunker without a language the file's language).

    The bytes are decoded as strict UTF-8 with a byte order mark and line ends kept, so the
    chunks' offsets are offsets into the file's text; a file that starts with a UTF-16 or
    UTF-32 byte order mark is decoded from that encoding (the mark kept as U+FEFF, offsets
    those of the decoded text), and ``encoding`` (any Python codec, the command line's
    ``--input-encoding``) reads text in another one.

    Args:
        path: The file.
        encoding: The file's encoding, when it is not UTF-8 (None: UTF-8, or UTF-16 or
            UTF-32 by a byte order mark).
        metadata: The document's metadata (a mapping), as for ``Document``.

    Returns:
        ``Document(text, id=document_id(path), source=os.fspath(path))``.

    Raises:
        OSError: The file cannot be read.
        ValueError: The file is binary, changed while it was read, or is not text in its
            encoding (the message names the byte and offset).

    Example:
        >>> from spanchunk.ingest import read_document
        >>> document = read_document("README.md")
        >>> document.source, document.text.startswith("# spanchunk")
        ('README.md', True)
    """
    given = os.fspath(path)
    if not os.path.exists(given):
        # The error open() gives, with the path: read_source reports it as a skip.
        raise FileNotFoundError(2, "No such file or directory", given)
    read = read_source(File(given, 0), encoding)
    if isinstance(read, Skip):
        if read.kind == UNREADABLE:
            raise OSError(f"{given}: {read.message}")
        raise ValueError(f"{given}: {read.message}")
    data = read[0]
    codec = (
        "utf-8"
        if encoding is not None
        else next((name for mark, name in _WIDE_MARKS if data.startswith(mark)), "utf-8")
    )
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as error:
        name = "UTF-8" if codec == "utf-8" else codec
        raise ValueError(
            f"{given}: not {name} (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}): pass encoding=... for text in another encoding"
        ) from None
    return Document(text, id=document_id(given), source=given, metadata=metadata)  # type: ignore[arg-type]
