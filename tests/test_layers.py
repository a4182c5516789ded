"""No module reaches a package above its layer, by import or by a module path written as a
string ("core.compile.handlers:measure_call", resolved at run time by core.jobs.code_paths
or importlib), which import-linter cannot see. The layers are import-linter's own contracts
in pyproject.toml, read here, so the two checks cannot drift apart; `make check` runs this
file beside lint-imports."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator

from tests.support import ROOT

PACKAGES = ("app", "core", "views")
#: a module path, optionally with ':attribute' or a trailing '.' (the head of f"pkg.{name}")
MODULE_PATH = re.compile(r"((?:app|core|views)(?:\.\w+)+)(?::\w*|\.)?")


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def exists(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def named_modules(source: str) -> Iterator[tuple[int, str]]:
    """(line, module) of every string that is a module path of ours (f-strings' parts too)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = MODULE_PATH.fullmatch(node.value)
            if match and exists(match.group(1)):
                yield node.lineno, match.group(1)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def broken_rule(importer: str, imported: str) -> str | None:
    """The contract `importer` breaks by reaching `imported`, or None."""
    for contract in contracts():
        if contract["type"] == "forbidden":
            if any(_within(importer, s) for s in contract["source_modules"]) and any(
                _within(imported, f) for f in contract["forbidden_modules"]
            ):
                return contract["name"]
            continue
        for container in contract.get("containers", [""]):
            where = {}  # module -> (layer index, sibling, independent siblings)
            for index, layer in enumerate(contract["layers"]):
                independent = "|" in layer
                for sibling in re.split(r"[|:]", layer):
                    full = f"{container}.{sibling.strip()}" if container else sibling.strip()
                    for module in (importer, imported):
                        if _within(module, full):
                            where[module] = (index, full, independent)
            if importer in where and imported in where:
                (i, a, independent), (j, b, _) = where[importer], where[imported]
                if j < i or (i == j and a != b and independent):
                    return contract["name"]
    return None


def string_references() -> Iterator[tuple[str, int, str]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, module in named_modules(path.read_text(encoding="utf-8")):
                yield module_name(path), line, module


def test_no_module_names_a_package_above_its_layer_in_a_string():
    broken = [
        f"{importer} line {line} names {module}: breaks '{rule}'"
        for importer, line, module in string_references()
        if (rule := broken_rule(importer, module))
    ]
    assert not broken, "\n".join(broken)


def test_the_check_sees_strings_and_knows_the_layers():
    found = list(named_modules('X = "core.compile.handlers:measure_call"\nY = f"core.compile.handlers:{k}_call"'))
    assert found == [(1, "core.compile.handlers"), (2, "core.compile.handlers")]
    assert not list(named_modules('"""core.compile.handlers:measure_call runs the job."""'))  # prose
    assert any(module == "core.compile.handlers" for _, _, module in string_references())
    assert broken_rule("core.jobs.registry", "core.compile.kinds")  # jobs is below compile
    assert broken_rule("views.export_dialog", "app.cli.export")  # views is below app
    assert broken_rule("core.store.schema", "views.theme")  # core imports no views
    assert broken_rule("views.editor.canvas", "views.explorer.session")  # the editor is below the explorer
    assert broken_rule("views.search.search_panel", "views.explorer.session")  # independent pages
    assert broken_rule("core.compile.handlers", "core.ir.graph") is None
    assert broken_rule("app.gui.window", "views.editor.canvas") is None
