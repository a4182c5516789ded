"""The `tessera` command line. Every GUI action has a subcommand here.

Subcommand groups live in app/cli_*.py modules, each with add_parsers(subparsers);
errors meant for users (TesseraError) print as one clear message, never a traceback."""
from __future__ import annotations

import argparse
import importlib
import sys

from core.ir.errors import TesseraError

COMMAND_MODULES = ("app.cli_ir",)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tessera", description="Design-space explorer for neural operators.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except TesseraError as e:
        print(f"tessera {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
