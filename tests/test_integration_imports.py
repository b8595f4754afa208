"""Without its framework, each integration module fails on import naming the extra to install."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("llamaindex", "llama_index", "llamaindex"),
        ("haystack", "haystack", "haystack"),
        ("ray", "pyarrow", "ray"),
        # packaging reads the framework's declared range back (within_declared_range).
        ("llamaindex", "packaging", "llamaindex"),
        ("haystack", "packaging", "haystack"),
    ],
)
def test_missing_framework_names_the_extra(module: str, framework: str, extra: str) -> None:
    # A None entry in sys.modules makes "import framework" fail as if it were not installed.
    code = (
        f"import sys; sys.modules[{framework!r}] = None\nimport spanchunk.integrations.{module}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode != 0
    # The packages the installed spanchunk declares for the extra (it is on no index, so
    # "pip install 'spanchunk[extra]'" cannot work), and the extra from a clone.
    declared = [
        requirement.strip()
        for requirement, _, marker in map(
            lambda line: line.partition(";"), importlib.metadata.requires("spanchunk") or []
        )
        if marker.replace(" ", "").replace('"', "'") == f"extra=='{extra}'"
    ]
    assert declared
    assert "pip install " + " ".join(f"'{package}'" for package in declared) in done.stderr
    assert f"pip install '.[{extra}]'" in done.stderr
    assert "ImportError" in done.stderr


def test_the_package_imports_no_framework() -> None:
    code = (
        "import sys, spanchunk.integrations\n"
        "print(sorted(m for m in ('langchain_core', 'llama_index', 'haystack', 'ray', 'pyarrow')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
