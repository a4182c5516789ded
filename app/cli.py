"""The `tessera` command line. Every GUI action has a subcommand here.

Subcommand groups live in app/cli_*.py modules, each with add_parsers(subparsers);
errors meant for users (TesseraError) print as one clear message, never a traceback.
Only the module of the command being run is imported (the window starts faster);
`tessera --help` imports them all. tests/core/test_cli_commands.py keeps COMMANDS true."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from core.ir.errors import TesseraError

#: subcommand -> the module that defines it
COMMANDS = {
    "gui": "app.cli_gui",
    "demo": "app.cli_demo",
    "validate": "app.cli_ir",
    "info": "app.cli_ir",
    "codegen": "app.cli_compile",
    "measure": "app.cli_compile",
    "bench": "app.cli_compile",
    "submit": "app.cli_jobs",
    "worker": "app.cli_jobs",
    "jobs": "app.cli_jobs",
    "results": "app.cli_jobs",
    "evaluate": "app.cli_accuracy",
    "assign": "app.cli_accuracy",
    "search": "app.cli_search",
    "discover": "app.cli_discover",
    "sequence": "app.cli_sequences",
    "export": "app.cli_export",
    "device": "app.cli_device",
    "tune": "app.cli_tune",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only `command`'s module when it is known."""
    parser = argparse.ArgumentParser(prog="tessera", description="Design-space explorer for neural operators.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for name in modules:
        importlib.import_module(name).add_parsers(sub)
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


if __name__ == "__main__":
    sys.exit(main())
