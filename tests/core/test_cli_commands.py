"""app.cli.COMMANDS names, for each subcommand, the module that really defines it."""

import argparse
import importlib

import pytest

from app.cli import COMMANDS, build_parser, main


def test_every_module_defines_exactly_its_listed_commands():
    for module in set(COMMANDS.values()):
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(module).add_parsers(sub)
        assert set(sub.choices) == {c for c, m in COMMANDS.items() if m == module}, module


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
