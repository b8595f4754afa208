"""The chunkers of a run, from the command line's settings, checked in its own words."""

from __future__ import annotations

import argparse
import codecs
import re
from typing import TYPE_CHECKING, Any

from spanchunk.cli._parser import DEFAULT_ENCODING

if TYPE_CHECKING:
    from spanchunk.cli._job import Chunkers

__all__ = ["make_chunkers", "run_settings"]


def check_settings(args: argparse.Namespace) -> None:
    """Refuse settings that cannot work, in the command line's names.

    Raises:
        ValueError: the message names the options and the fix.
    """
    for option, value, least in (
        ("--parent-size", args.parent_size, 1),
        ("--child-size", args.child_size, 1),
        ("--overlap", args.overlap, 0),
    ):
        if value < least:
            raise ValueError(f"{option} must be at least {least}, got {value}")
    same_unit = (args.child_unit or args.unit) == args.unit
    if same_unit and args.child_size >= args.parent_size:
        raise ValueError(
            f"--child-size must be smaller than --parent-size (got {args.child_size} and "
            f"{args.parent_size}): lower --child-size or raise --parent-size"
        )
    if args.overlap >= args.child_size:
        raise ValueError(
            f"--overlap must be smaller than --child-size (got {args.overlap} and "
            f"{args.child_size}): e.g. --overlap {args.child_size // 5}"
        )
    if args.input_encoding is not None:
        try:
            codecs.lookup(args.input_encoding)
        except LookupError:
            raise ValueError(
                f"--input-encoding {args.input_encoding!r} is not a text encoding Python "
                "knows: give a codec name such as latin-1, cp1252, utf-16 or shift_jis"
            ) from None
    if args.stdin_name is not None and "-" not in args.paths:
        raise ValueError("--stdin-name names the text read from stdin: add the PATH '-'")
    if args.paths.count("-") > 1:
        raise ValueError("PATH '-' (stdin) can be given once")


#: The API's names for the settings, and the command line's.
_OPTION_NAMES = {
    "child_overlap": "--overlap",
    "overlap": "--overlap",
    "child_size": "--child-size",
    "parent_size": "--parent-size",
    "chunk_size": "the size",
    "encoding": "--encoding",
    "tokenizer": "--tokenizer",
    "unit": "--unit",
    "merge": "--merge",
}
_NAMES = re.compile(r"\b(" + "|".join(sorted(_OPTION_NAMES, key=len, reverse=True)) + r")\b(=?)")


def in_option_names(message: str) -> str:
    """An API error message with the settings' names spelled as the command line's
    options (``child_overlap`` becomes ``--overlap``)."""
    return _NAMES.sub(
        lambda match: _OPTION_NAMES[match.group(1)] + (" " if match.group(2) else ""), message
    )


def run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings that decide a run's chunks, by option, as a store records them."""
    token = "token" in (args.unit, args.child_unit)
    return {
        "parent_size": args.parent_size,
        "child_size": args.child_size,
        "overlap": args.overlap,
        "unit": args.unit,
        "child_unit": args.child_unit,
        "encoding": (args.encoding or (None if args.tokenizer else DEFAULT_ENCODING))
        if token
        else None,
        "tokenizer": args.tokenizer if token else None,
        "merge": args.merge,
        "format": args.format,
    }


def _level_chunker(
    size: int, overlap: int, units: dict[str, object], markdown: bool, merge: str = "boundary"
) -> object:
    from spanchunk import MarkdownChunker, RecursiveChunker  # noqa: PLC0415

    kind = MarkdownChunker if markdown else RecursiveChunker
    extra = {} if merge == "boundary" else {"merge": merge}
    return kind(size, overlap=overlap, **extra, **units)  # type: ignore[arg-type]


def _units(unit: str, args: argparse.Namespace) -> dict[str, object]:
    if unit != "token":
        return {"unit": unit}
    if args.tokenizer is not None:
        return {"unit": unit, "tokenizer": args.tokenizer}
    return {"unit": unit, "encoding": args.encoding or DEFAULT_ENCODING}


def make_chunkers(args: argparse.Namespace) -> Chunkers:
    """The two chunkers of a run (plain and Markdown parents), from the settings.

    Raises:
        ValueError: impossible settings (the message names the fix).
    """
    check_settings(args)
    try:
        return _make_chunkers(args)
    except ValueError as error:
        raise ValueError(in_option_names(str(error))) from None


def _make_chunkers(args: argparse.Namespace) -> Chunkers:
    from spanchunk import ParentChildChunker  # noqa: PLC0415
    from spanchunk.cli._job import Chunkers  # noqa: PLC0415

    if args.unit != "token" and (args.tokenizer or args.encoding):
        given = "--tokenizer" if args.tokenizer else "--encoding"
        if (args.child_unit or args.unit) != "token":
            raise ValueError(f"{given} applies to token units only: add --unit token")
    parent_units = _units(args.unit, args)
    child_unit = args.child_unit or args.unit
    chunkers = []
    greedy = args.merge == "greedy"
    for markdown in (False, True):
        child_chunker = None
        parent_chunker: object = "markdown" if markdown else None
        if greedy or (args.child_unit is not None and args.child_unit != args.unit):
            child_chunker = _level_chunker(
                args.child_size, args.overlap, _units(child_unit, args), markdown, args.merge
            )
        if greedy:
            parent_chunker = _level_chunker(args.parent_size, 0, parent_units, markdown, "greedy")
        chunkers.append(
            ParentChildChunker(
                parent_size=args.parent_size,
                child_size=args.child_size,
                child_overlap=args.overlap,
                parent_chunker=parent_chunker,  # type: ignore[arg-type]
                child_chunker=child_chunker,  # type: ignore[arg-type]
                **parent_units,  # type: ignore[arg-type]
            )
        )
    encoding = args.input_encoding
    if encoding is not None and codecs.lookup(encoding).name == "utf-8":
        encoding = None  # UTF-8 is what the core reads
    return Chunkers(chunkers[0], chunkers[1], args.format, run_settings(args), encoding)
