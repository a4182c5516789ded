"""app.cli.COMMANDS: each subcommand is the module of app/cli named after it, which defines it
alone; the command line imports no Qt until a command draws."""

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import app.cli
from app.cli import COMMANDS, build_parser, main
from core.search.strategies import STRATEGIES
from tests.support import ROOT

#: modules of app/cli that are no command: what the commands share, and evaluate's --model part
SHARED = {"__init__", "__main__", "options", "inputs", "reports", "evaluate_model"}


def test_every_command_module_defines_exactly_its_command():
    modules = {p.stem for p in Path(app.cli.__file__).parent.glob("*.py")} - SHARED
    assert modules == set(COMMANDS)
    for command in COMMANDS:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(f"app.cli.{command}").add_parsers(sub)
        assert set(sub.choices) == {command}


def test_every_command_parses_without_importing_qt():
    """`tessera --help` imports every command's module; none imports Qt (the window and
    pictures import it when they run)."""
    probe = "import sys, app.cli; app.cli.build_parser(); print(sorted(m for m in ('PySide6', 'pyqtgraph') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stderr


def test_search_and_discover_offer_the_strategy_table(capsys):
    for command in ("search", "discover"):
        parser = build_parser(command)
        for key in STRATEGIES:
            assert parser.parse_args([command, "--strategy", key]).strategy == key
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--strategy", "genetic"])
        assert f"choose from {', '.join(map(repr, STRATEGIES))}" in capsys.readouterr().err


def test_full_parser_lists_every_command():
    help_text = build_parser().format_help()
    assert all(command in help_text for command in COMMANDS)


def test_unknown_command_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["frobnicate"])
    assert exit_.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """`tessera results --json | head -1`: the closed pipe is no traceback and no failure."""
    import subprocess
    import sys

    from core.ir.serialize import read_document
    from core.store import Store
    from tests.support import EXAMPLES, ROOT

    store = tmp_path / "results.db"
    with Store(store) as s, s.write():
        op = s.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        for i in range(3000):  # far more than a pipe holds
            s.add_measurement(op, None, {"latency_ms": 1.0 + i, "flops": 1e6})
    child = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "results", "--json", "--store", str(store)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout.readline().strip() == b"["
    child.stdout.close()
    error = child.stderr.read().decode()
    assert child.wait(timeout=60) == 0 and error == ""
