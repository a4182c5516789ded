"""`tessera bench NAME`: a benchmark of tests/benchmarks, run as its own script."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from core.errors import TesseraError

BENCHMARKS = Path(__file__).resolve().parents[2] / "tests" / "benchmarks"


def add_parsers(sub) -> None:
    p = sub.add_parser("bench", help="run a benchmark from tests/benchmarks (e.g. `tessera bench kernels`)")
    p.add_argument("name", metavar="NAME", help=f"one of: {', '.join(_benchmarks()) or 'none installed'}")
    p.add_argument("options", nargs=argparse.REMAINDER, help="passed to the benchmark, e.g. `kernels --quick`")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    script = BENCHMARKS / f"bench_{args.name}.py"
    if args.name not in _benchmarks():
        raise TesseraError(f"no benchmark {args.name!r} (available: {', '.join(_benchmarks()) or 'none'})")
    command = [sys.executable, "-m", f"tests.benchmarks.{script.stem}", *args.options]
    return subprocess.call(command, cwd=BENCHMARKS.parents[1])


def _benchmarks() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in BENCHMARKS.glob("bench_*.py"))
