"""The chunkers of a run, from the command line's settings, checked in its own words."""

from __future__ import annotations

import argparse
import codecs
import re
from typing import TYPE_CHECKING, Any, Literal

from spanchunk.cli._parser import DEFAULT_ENCODING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from spanchunk.chunkers import HierarchicalChunker
    from spanchunk.ingest.formats import FileChunkers

__all__ = ["make_chunkers", "run_settings", "source_file_counter"]


def check_settings(args: argparse.Namespace) -> None:
    """Refuse settings that cannot work, in the command line's names.

    Raises:
        ValueError: the message names the options and the fix.
    """
    if args.sizes is not None:
        given = [
            option
            for option, value in (
                ("--parent-size", args.parent_size),
                ("--child-size", args.child_size),
            )
            if value is not None
        ]
        if given:
            raise ValueError(
                f"--sizes gives every level's size: drop {' and '.join(given)} (or --sizes, "
                "for two levels)"
            )
        if args.child_unit is not None:
            raise ValueError(
                "--child-unit applies to two levels: with --sizes every level is in --unit"
            )
        if args.merge != "boundary":
            raise ValueError("--merge greedy applies to two levels: drop --sizes or --merge")
        if args.overlap >= args.sizes[-1]:
            raise ValueError(
                f"--overlap must be smaller than the leaves' size (got {args.overlap} and "
                f"{args.sizes[-1]}): e.g. --overlap {args.sizes[-1] // 5}"
            )
        return _check_encodings(args)
    args.parent_size = 2000 if args.parent_size is None else args.parent_size
    args.child_size = 400 if args.child_size is None else args.child_size
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
    _check_encodings(args)


def _check_encodings(args: argparse.Namespace) -> None:
    """Refuse an --input-encoding Python does not know, and a misused stdin.

    Raises:
        ValueError: the message names the fix.
    """
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


#: The kind of code chunker that reads each file's language from its name.
EACH_LANGUAGE = "each file's language"

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
    "sizes": "--sizes",
}
_NAMES = re.compile(
    r"(?<![-\w])(" + "|".join(sorted(_OPTION_NAMES, key=len, reverse=True)) + r")\b(=?)"
)


def in_option_names(message: str) -> str:
    """An API error message with the settings' names spelled as the command line's
    options (``child_overlap`` becomes ``--overlap``)."""
    return _NAMES.sub(
        lambda match: _OPTION_NAMES[match.group(1)] + (" " if match.group(2) else ""), message
    )


def run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings that decide a run's chunks, by option, as a store records them."""
    token = "token" in (args.unit, args.child_unit)
    levels: dict[str, Any] = (
        {"sizes": list(args.sizes)}
        if args.sizes is not None
        else {"parent_size": args.parent_size, "child_size": args.child_size}
    )
    return {
        **levels,
        "overlap": args.overlap,
        "unit": args.unit,
        "child_unit": args.child_unit,
        "encoding": (args.encoding or (None if args.tokenizer else DEFAULT_ENCODING))
        if token
        else None,
        "tokenizer": args.tokenizer if token else None,
        "merge": args.merge,
        "format": args.format,
        **({"language": args.language} if getattr(args, "language", None) else {}),
        # Pages change metadata alone; the default is left out, as stores made before the
        # option recorded it.
        **({"pages": _pages(args)} if _pages(args) is not True else {}),
    }


def _pages(args: argparse.Namespace) -> bool | str:
    """``--pages REGEX`` or ``--no-pages`` as the API's ``pages`` (True: the defaults)."""
    if getattr(args, "no_pages", False):
        return False
    pattern = getattr(args, "pages", None)
    return True if pattern is None else pattern


def _level_chunker(
    size: int,
    overlap: int,
    units: dict[str, object],
    kind: str | None,
    merge: str = "boundary",
    *,
    pages: bool | str = True,
) -> object:
    """A level of the chunker of one kind of file: None (text), "markdown", "html" or a
    language."""
    from spanchunk import CodeChunker, HtmlChunker, MarkdownChunker, RecursiveChunker  # noqa: PLC0415

    extra: dict[str, object] = {} if merge == "boundary" else {"merge": merge}
    if pages is not True:
        extra["pages"] = pages
    if kind is None:
        return RecursiveChunker(size, overlap=overlap, **extra, **units)  # type: ignore[arg-type]
    if kind == "markdown":
        return MarkdownChunker(size, overlap=overlap, **extra, **units)  # type: ignore[arg-type]
    if kind == "html":
        return HtmlChunker(size, overlap=overlap, **extra, **units)  # type: ignore[arg-type]
    language = None if kind == EACH_LANGUAGE else kind
    return CodeChunker(size, overlap=overlap, language=language, **extra, **units)  # type: ignore[arg-type]


def _units(unit: str, args: argparse.Namespace) -> dict[str, object]:
    if unit != "token":
        return {"unit": unit}
    if args.tokenizer is not None:
        return {"unit": unit, "tokenizer": args.tokenizer}
    return {"unit": unit, "encoding": args.encoding or DEFAULT_ENCODING}


def make_chunkers(args: argparse.Namespace) -> FileChunkers:
    """The chunkers of a run (plain, Markdown and each language's code parents), from the
    settings.

    Raises:
        ValueError: impossible settings (the message names the fix).
    """
    check_settings(args)
    try:
        return _make_chunkers(args)
    except ValueError as error:
        raise ValueError(in_option_names(str(error))) from None


def _make_chunkers(args: argparse.Namespace) -> FileChunkers:
    from spanchunk import ParentChildChunker  # noqa: PLC0415
    from spanchunk.ingest.formats import FileChunkers  # noqa: PLC0415

    if args.unit != "token" and (args.tokenizer or args.encoding):
        given = "--tokenizer" if args.tokenizer else "--encoding"
        if (args.child_unit or args.unit) != "token":
            raise ValueError(f"{given} applies to token units only: add --unit token")
    parent_units = _units(args.unit, args)
    child_unit = args.child_unit or args.unit
    chunkers: list[HierarchicalChunker] = []
    greedy = args.merge == "greedy"
    pages = _pages(args)
    # HTML pages get a chunker of their own with every format that reads them.
    kinds = (None, "markdown", *_languages(args), *(["html"] if _reads_html(args) else []))
    for kind in kinds if args.sizes is not None else ():
        chunkers.append(_tree_chunker(args, kind, parent_units))
    for kind in kinds if args.sizes is None else ():
        child_chunker = None
        parent_chunker: object = None
        language = None
        if kind in ("markdown", "html"):
            parent_chunker = kind
        elif kind is not None:
            parent_chunker, language = "code", (None if kind == EACH_LANGUAGE else kind)
        if greedy or (args.child_unit is not None and args.child_unit != args.unit):
            child_chunker = _level_chunker(
                args.child_size,
                args.overlap,
                _units(child_unit, args),
                kind,
                args.merge,
                pages=pages,
            )
        if greedy:
            parent_chunker = _level_chunker(
                args.parent_size, 0, parent_units, kind, "greedy", pages=pages
            )
        chunkers.append(
            ParentChildChunker(
                parent_size=args.parent_size,
                child_size=args.child_size,
                child_overlap=args.overlap,
                parent_chunker=parent_chunker,  # type: ignore[arg-type]
                child_chunker=child_chunker,  # type: ignore[arg-type]
                language=language,
                pages=pages,
                **parent_units,  # type: ignore[arg-type]
            )
        )
    encoding = args.input_encoding
    if encoding is not None and codecs.lookup(encoding).name == "utf-8":
        encoding = None  # UTF-8 is what the core reads
    languages = _languages(args)
    code = tuple(
        (None if kind == EACH_LANGUAGE else kind, chunker)
        for kind, chunker in zip(languages, chunkers[2 : 2 + len(languages)], strict=True)
    )
    return FileChunkers(
        chunkers[0],
        chunkers[1],
        args.format,
        run_settings(args),
        encoding,
        code,
        _language(args),
        chunkers[-1] if _reads_html(args) else None,
    )


def _reads_html(args: argparse.Namespace) -> bool:
    """Whether a run reads HTML pages: with --format html, and by their names with auto and
    code (without --language)."""
    return args.format == "html" or (
        args.format in ("auto", "code") and not getattr(args, "language", None)
    )


def _tree_chunker(
    args: argparse.Namespace, kind: str | None, units: dict[str, object]
) -> HierarchicalChunker:
    """The chunker of ``--sizes`` for one kind of file: its structure (Markdown sections,
    code definitions) at the top level, the separators below."""
    from spanchunk import HierarchicalChunker  # noqa: PLC0415

    top: Literal["markdown", "html", "code"] | None = None
    language = None
    if kind == "markdown":
        top = "markdown"
    elif kind == "html":
        top = "html"
    elif kind is not None:
        top, language = "code", (None if kind == EACH_LANGUAGE else kind)
    return HierarchicalChunker(
        list(args.sizes),
        args.overlap,
        chunkers=[top, *([None] * (len(args.sizes) - 1))],
        language=language,
        pages=_pages(args),
        **units,  # type: ignore[arg-type]
    )


def _language(args: argparse.Namespace) -> str | None:
    """``--language``, as the core names it (None when not given).

    Raises:
        ValueError: a language the core does not parse, or one without --format code.
    """
    from spanchunk.chunkers.code import LANGUAGES  # noqa: PLC0415

    given = getattr(args, "language", None)
    if given is None:
        return None
    if args.format != "code":
        raise ValueError("--language applies to --format code: add --format code")
    wanted = given.strip().lower()
    for name, (aliases, _extensions) in LANGUAGES.items():
        if wanted == name or wanted in aliases:
            return name
    raise ValueError(f"--language {given!r} is not one of {', '.join(LANGUAGES)}")


def source_file_counter(args: argparse.Namespace) -> Callable[[Iterable[str]], int] | None:
    """With ``--format auto``, a function that counts the source files (by the endings the
    core parses) among paths: the summary says how many were cut as plain text and that
    ``--format code`` cuts them at their definitions. None with any other format."""
    if args.format != "auto":
        return None
    from spanchunk.chunkers.code import language_of  # noqa: PLC0415

    def count(paths: Iterable[str]) -> int:
        return sum(language_of(path) is not None for path in paths)

    return count


def _languages(args: argparse.Namespace) -> tuple[str, ...]:
    """The code chunkers of a run: with --format code, the one of --language, or one that
    reads each file's language from its name (``EACH_LANGUAGE``: a code chunker without a
    language, as the API's ``ParentChildChunker(parent_chunker="code")`` is, so the two give
    the same ids); none with auto, text or markdown (the parse costs about 10x plain
    cutting: asked for, never by default)."""
    if args.format != "code":
        return ()
    language = _language(args)
    return (language,) if language is not None else (EACH_LANGUAGE,)
