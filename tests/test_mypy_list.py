"""The list of our modules mypy still ignores (pyproject.toml) can only shrink: every entry names
a module of the repository, once, and the list holds no more entries than it did when this
test last changed. A stray word (a pasted mypy summary) or a module renamed away would
otherwise sit on the list unnoticed, and a new module could be added to it to hide its errors."""

from __future__ import annotations

import tomllib

from tests.support import ROOT

#: the most modules the list may hold; lower it when you take modules off, never raise it
CEILING = 7
OURS = ("app", "core", "views")


def ignored_modules() -> list[str]:
    """The entries of the overrides that ignore errors in our own packages."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["overrides"]
    entries = []
    for override in overrides:
        if override.get("ignore_errors"):
            modules = override["module"]
            entries += [modules] if isinstance(modules, str) else modules
    return entries


def is_module(name: str) -> bool:
    """`core.ir.graph` names core/ir/graph.py or core/ir/graph/__init__.py; `views.editor.*` a package."""
    parts = name.removesuffix(".*").split(".")
    if parts[0] not in OURS or not all(part.isidentifier() for part in parts):
        return False
    path = ROOT.joinpath(*parts)
    if name.endswith(".*"):
        return (path / "__init__.py").is_file()
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_ignored_entry_is_one_of_our_modules():
    entries = ignored_modules()
    assert entries, "pyproject.toml has no ignore_errors override: drop this test with it"
    strays = [name for name in entries if not is_module(name)]
    assert not strays, f"pyproject.toml's mypy ignore list names no module of the repository: {strays}"


def test_each_ignored_module_is_listed_once():
    entries = ignored_modules()
    assert len(entries) == len(set(entries)), sorted({name for name in entries if entries.count(name) > 1})


def test_the_ignore_list_only_shrinks():
    count = len(ignored_modules())
    assert count <= CEILING, (
        f"{count} modules ignored by mypy, at most {CEILING}: make the new module type-clean instead"
    )
