"""``spanchunk info STORE``: what a store holds (``spanchunk.stores.info.store_info``), for a
person or (``--json``) a script."""

from __future__ import annotations

import json
import os

from spanchunk.ingest.output import lock_name
from spanchunk.ingest.statcache import option_value
from spanchunk.stores.info import store_info

__all__ = ["info"]


def info(path: str, *, as_json: bool = False) -> str:
    """The report of ``spanchunk info``: lines for a person, or one JSON object."""
    try:
        found = store_info(path)
    except FileNotFoundError:
        folder, name = os.path.split(os.path.abspath(path))
        if os.path.exists(os.path.join(folder, lock_name(name))):
            raise FileNotFoundError(
                f"the store {path} is being made by a run that has not finished: run "
                "spanchunk info again when it is done"
            ) from None
        raise
    if as_json:
        return json.dumps(found, indent=2, sort_keys=True)
    top = max((level["level"] for level in found["levels"]), default=0)
    lines = [
        f"store:      {found['path']} (schema {found['schema']})",
        f"size:       {_megabytes(sum(found['file_bytes'].values()))}"
        + (
            f" (of which -wal {_megabytes(found['file_bytes']['-wal'])})"
            if "-wal" in found["file_bytes"]
            else ""
        ),
        f"documents:  {found['documents']} ({found['documents_with_chunks']} with chunks)",
    ]
    settings = found["settings"]
    if settings:
        shown = " ".join(
            f"--{name.replace('_', '-')} {option_value(value)}"
            for name, value in sorted(settings.items())
            if value is not None
        )
        lines.append(f"settings:   {shown}")
    lines.append(f"fingerprint: {found['fingerprint'] or 'none recorded'}")
    for level in found["levels"]:
        name = (
            "children"
            if level["level"] == 0
            else ("parents" if top == 1 else f"level {level['level']}")
        )
        lines.append(
            f"{name + ':':<11} {level['chunks']} chunks, chars min {level['min_chars']}, "
            f"median {level['median_chars']}, mean {level['mean_chars']}, "
            f"max {level['max_chars']}"
        )
    if found["skipped_files"]:
        said = ", ".join(
            f"{count} {kind}" for kind, count in sorted(found["skipped_files"].items())
        )
        lines.append(f"skipped:    {said} (recorded: a re-run does not read them again)")
    return "\n".join(lines)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} KB"
