"""The `tessera` command line. Every GUI action has a subcommand here.

Each subcommand is a module of this package named after it (app/cli/measure.py is
`tessera measure`), with add_parsers(subparsers); options several commands take are
written once in options.py. Errors meant for users (TesseraError) print as one clear
message, never a traceback. Only the module of the command being run is imported (the
window starts faster); `tessera --help` imports them all."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from core.errors import TesseraError

#: the subcommands, in the order `tessera --help` lists them; each is the module app.cli.<name>
COMMANDS = (
    "gui",
    "demo",
    "validate",
    "info",
    "codegen",
    "measure",
    "bench",
    "submit",
    "worker",
    "jobs",
    "results",
    "evaluate",
    "assign",
    "search",
    "discover",
    "sequence",
    "export",
    "device",
    "tune",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only `command`'s module when it is known."""
    parser = argparse.ArgumentParser(prog="tessera", description="Design-space explorer for neural operators.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [command] if command in COMMANDS else COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv) or ["gui"]  # plain `tessera` opens the window
    args = build_parser(argv[0]).parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except TesseraError as e:
        print(f"tessera {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`tessera results | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
