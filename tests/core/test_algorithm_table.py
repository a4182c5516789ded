"""core.compile.algorithms.ALGORITHMS is the one list of kernel algorithms, and each row holds
what it claims: every Kernel class of core.compile.kernels has a row and every row's
'module:Class' is such a class; each algorithm runs some example operator (its check lets one
through, so the window and `tessera measure` can reach it); a row that takes tile sizes reads
them and one that does not ignores them; one that needs a sequence is offered only with one;
`tessera measure --algorithm` offers each; docs/kernels.md's table describes each. A kernel
module added without its row, or a row dropped, fails here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from typing import Protocol

import pytest

import core.compile.kernels
from app.cli import build_parser
from core.compile.algorithms import ALGORITHMS, AUTO, algorithms_for
from core.compile.errors import CompileError
from core.compile.settings import Settings
from core.ir.serialize import load_operator
from tests.support import EXAMPLES, ROOT
from tests.test_docs import subcommands

pytestmark = pytest.mark.tvm  # imports the kernels, which import TVM
KERNELS = {name: a.kernel for name, a in ALGORITHMS.items() if a.kernel is not None}


def kernel_classes() -> dict[str, type]:
    """'module:Class' -> class, for each class of core.compile.kernels with the Kernel
    protocol's two methods that can be made (not the protocol, nor an abstract base such as
    ConvKernel)."""
    found = {}
    for info in pkgutil.iter_modules(core.compile.kernels.__path__):
        module = importlib.import_module(f"core.compile.kernels.{info.name}")
        for name, cls in vars(module).items():
            if (
                inspect.isclass(cls)
                and cls.__module__ == module.__name__
                and callable(getattr(cls, "untuned", None))
                and callable(getattr(cls, "tune", None))
                and not inspect.isabstract(cls)
                and Protocol not in cls.__mro__  # the protocol itself
            ):
                found[f"{module.__name__}:{name}"] = cls
    return found


def test_every_kernel_class_has_a_row_and_every_row_names_one():
    classes = set(kernel_classes())
    rows = set(KERNELS.values())
    assert not classes - rows, f"kernels without a row in ALGORITHMS: {sorted(classes - rows)}"
    assert not rows - classes, f"rows naming no kernel class: {sorted(rows - classes)}"
    assert ALGORITHMS[AUTO].kernel is None, "auto measures the others: it has no kernel of its own"


def test_each_algorithm_runs_some_example_operator():
    reached = set()
    for path in sorted(EXAMPLES.glob("*.json")):
        graph = load_operator(path)
        reached.update(algorithms_for(graph, graph.bindings, sequence=True)[0])
    assert reached == set(KERNELS), f"no example operator reaches {sorted(set(KERNELS) - reached)}"


def test_the_sequence_claim_decides_when_an_algorithm_is_offered():
    graph = load_operator(EXAMPLES / "conv2d.json")
    without = set(algorithms_for(graph, graph.bindings, sequence=False)[0])
    for name, a in ALGORITHMS.items():
        if a.needs_sequence:
            assert name not in without
            with pytest.raises(CompileError, match="sequence"):
                Settings(algorithm=name)
        elif a.kernel is not None:
            Settings(algorithm=name)  # accepted without a sequence


def test_only_the_algorithms_that_take_tiles_read_them():
    classes = kernel_classes()
    for name, path in KERNELS.items():
        reads = re.search(r"settings\.tiles\b", inspect.getsource(classes[path])) is not None
        assert reads == ALGORITHMS[name].tiles, (
            f"{name}: tiles={ALGORITHMS[name].tiles}, its kernel reads them: {reads}"
        )


def test_measure_offers_each_and_the_docs_describe_each():
    option = subcommands(build_parser())["measure"]._option_string_actions["--algorithm"]
    assert tuple(option.choices) == tuple(ALGORITHMS)
    table = re.findall(r"^\| `(\w+)` \|", (ROOT / "docs" / "kernels.md").read_text(encoding="utf-8"), re.M)
    assert set(KERNELS) <= set(table), f"docs/kernels.md's algorithm table lacks {sorted(set(KERNELS) - set(table))}"
