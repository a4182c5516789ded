"""app.cli.COMMANDS names, for each subcommand, the module that really defines it."""
import argparse
import importlib

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
    try:
        main(["frobnicate"])
    except SystemExit as e:
        assert e.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err
