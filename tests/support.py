"""What tests share that is not a fixture: paths, a graph builder, the `tessera` command as a
user runs it, a job context that records progress, and quick timing settings."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from core.ir.editing import Editor
from core.ir.graph import OperatorGraph

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"
QUICK = {"repeat": 3, "min_repeat_ms": 5}  # timing settings for tests: a few short repeats
TINY = {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3}  # conv2d sizes that build in seconds
TINY_NETWORK = ["--backbone", "vgg", "--width", "4", "--resolution", "8"]  # trains and tunes in seconds
# variable kinds for hand-made convolution-like graphs (chain(..., variables=CONV_KINDS))
CONV_KINDS = {
    "C": "primary",
    "C_in": "primary",
    "C_out": "primary",
    "H": "primary",
    "W": "primary",
    "K": "coefficient",
    "Kh": "coefficient",
    "Kw": "coefficient",
    "G": "coefficient",
    "s": "coefficient",
}


def chain(input_shape, output_shape, steps, variables=None, bindings=None) -> OperatorGraph:
    """Build a graph from (node, op, params, [sources]) steps; the last node feeds the output."""
    g = OperatorGraph(input_shape, output_shape, variables=variables)
    g.bindings = dict(bindings or {})
    ed = Editor(g)
    for node, op, params, srcs in steps:
        ed.add_node(op, params, node=node)
        for port, s in enumerate(srcs):
            ed.connect(s, node, port)
    ed.connect(steps[-1][0], "output")
    return g


def reduction_orders(bindings=None) -> OperatorGraph:
    """y[o, h, w'] = sum_{c,k,w} x[c, h + k - 1, w] * wt[o, c]: C and W each index an input axis
    one-to-one, so either or both can be summed before the window replicates the input."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("u", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("sh", "share", {"dims": [0], "out": "C_out"}, ["u"]),
            ("rc", "reduce", {"dim": 1}, ["sh"]),
            ("rk", "reduce", {"dim": 1}, ["rc"]),
            ("rw", "reduce", {"dim": 2}, ["rk"]),
            ("ex", "expand", {"dim": 2, "size": "W"}, ["rw"]),
        ],
        variables=CONV_KINDS,
        bindings={"C_in": 8, "C_out": 8, "H": 6, "W": 7, "K": 3} if bindings is None else bindings,
    )


def relu_chain_document(n: int) -> dict:
    """An operator file of n elementwise nodes in a row: the shape of a huge graph at its simplest."""
    return {
        "format": "tessera.operator",
        "version": 1,
        "name": f"chain{n}",
        "variables": {"C": "primary", "H": "primary", "W": "primary"},
        "input": {"shape": ["C", "H", "W"], "spatial": 2},
        "output": {"shape": ["C", "H", "W"]},
        "bindings": {"C": 8, "H": 8, "W": 8},
        "nodes": [{"id": f"n{i}", "op": "elementwise", "params": {"fn": "relu"}} for i in range(n)],
        "edges": [
            {"from": "input" if i == 0 else f"n{i - 1}", "to": f"n{i}" if i < n else "output", "port": 0}
            for i in range(n + 1)
        ],
    }


def tessera(*args: str) -> subprocess.CompletedProcess:
    """The installed `tessera` script (as a user runs it), else the module."""
    script = Path(sys.executable).with_name("tessera")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]
    return subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def run_here(capsys, *argv: str) -> tuple[int, str, str]:
    """`tessera ARGV` run in this process as `main` runs it (errors printed, not raised): its exit
    code and what it printed to stdout and stderr."""
    from app.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """A Python file (an exported operator, say) imported as a module, as a user would import it."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def command(*argv: str) -> int:
    """A `tessera` subcommand run in this process; its TesseraError is raised, where main prints it."""
    from app.cli import build_parser

    args = build_parser(argv[0]).parse_args(argv)
    return args.func(args)


class Ctx:
    """A job context (core.jobs.context) that records progress and partial results and cancels on request."""

    def __init__(self, cancel: bool = False):
        self.seen: list[tuple[float, str]] = []
        self.partials: list[dict] = []
        self.cancel = cancel

    def partial(self, result: dict) -> None:
        self.partials.append(result)

    def progress(self, fraction: float, message: str = "") -> None:
        self.seen.append((fraction, message))

    def cancelled(self) -> bool:
        return self.cancel
