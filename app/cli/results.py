"""`tessera results`: the measurements in the results store, their Pareto front, or every
variant measured of one operator. The explorer's filter language selects rows. A speedup shows
its 95% interval, and a timed figure in doubt (its interval too wide) is marked with DOUBT."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

from core.errors import TesseraError
from core.ir.bindings import format_bindings
from core.store import MAXIMIZE, MINIMIZE, RESULT_OBJECTIVES, Store, StoreMissing
from core.store.measurement import speedup_text
from core.store.pareto import TIMED_OBJECTIVES
from core.store.result_filter import parse_filter
from core.store.variants import HEADER as VARIANT_HEADER
from core.store.variants import read_variants

from . import options
from .reports import print_table

RESULT_COLUMNS = (
    "measurement_id",
    "operator_name",
    "device_name",
    "bindings",
    "latency_ms",
    "gflops",
    "tuned",
    "speedup",
    "accuracy",
)
DOUBT = "*"  # after a timed figure whose timing is in doubt


def add_parsers(sub) -> None:
    p = sub.add_parser("results", help="measurements, or their Pareto front")
    p.add_argument(
        "--pareto",
        metavar="COLUMNS",
        help=f"two or three of {', '.join(RESULT_OBJECTIVES)}, comma-separated; "
        "add :min or :max to override the direction, e.g. latency_ms,accuracy:max",
    )
    p.add_argument(
        "--with-doubtful",
        action="store_true",
        help="rank results whose timing is in doubt on a front of timed values too (left off otherwise)",
    )
    p.add_argument(
        "--variants",
        type=int,
        metavar="ID",
        help="compare every measurement of measurement ID's "
        "operator on its device at its sizes: algorithm, layout, untuned/tuned/reused schedule",
    )
    p.add_argument(
        "--filter",
        metavar="TEXT",
        default="",
        help="the explorer's filter: words search names, origins, devices and bindings; terms compare "
        'a column, e.g. "latency<2 accuracy >= 0.9 origin=baseline name~conv"',
    )
    options.json_output(p)
    options.store(p)
    p.set_defaults(func=cmd_results)


def cmd_results(args) -> int:
    if args.variants is not None:
        return _print_variants(args)
    where = parse_filter(args.filter)
    columns, directions = _parse_objectives(args.pareto) if args.pareto else ([], [])
    rows: list[dict] = []
    shown: tuple[str, ...] = RESULT_COLUMNS
    try:
        store = Store(args.store, reading=True)
    except StoreMissing:
        pass  # nothing measured yet, and reading creates no store
    else:
        with store:
            if store.reading_note():
                print(f"warning: {store.reading_note()}", file=sys.stderr)
            if args.pareto:
                rows = store.pareto(columns, directions, where, with_doubtful=args.with_doubtful)
                shown = ("measurement_id", "operator_name", "device_name", "bindings", *columns)
            else:
                rows = list(store.results(where.where or None, where.args))
    if args.json:
        print(json.dumps([{**row, "bindings": json.loads(row["bindings"] or "{}")} for row in rows], indent=2))
        return 0
    if not rows:
        print("no results match the filter" if where else "no results yet")
        return 0
    table = [tuple("id" if c == "measurement_id" else c.removesuffix("_name") for c in shown)]
    table += [tuple(_cell(row, c) for c in shown) for row in rows]
    print_table(table)
    if any(row.get("in_doubt") and TIMED_OBJECTIVES.intersection(shown) for row in rows):
        print(
            f"{DOUBT} in doubt: the timing's 95% interval is too wide to rank by; "
            "`tessera submit --doubtful` measures it again"
        )
    return 0


def _print_variants(args) -> int:
    if args.pareto:
        raise TesseraError("give --variants ID or --pareto COLUMNS, not both")
    with Store(args.store, reading=True) as store:
        variants = read_variants(store, args.variants)
    if args.json:
        print(
            json.dumps(
                {**asdict(variants), "rows": [{**asdict(v), "vs_torch": v.vs_torch} for v in variants.rows]}, indent=2
            )
        )
        return 0
    print(variants.title())
    print_table([VARIANT_HEADER, *variants.table()])
    return 0


def _parse_objectives(text: str) -> tuple[list[str], list[str]]:
    """'latency_ms,accuracy:max' -> (['latency_ms', 'accuracy'], ['min', 'max'])."""
    columns, directions = [], []
    for item in filter(None, (part.strip() for part in text.split(","))):
        column, _, direction = item.partition(":")
        if direction not in ("", MINIMIZE, MAXIMIZE):
            raise TesseraError(f"--pareto {item!r}: the direction after ':' must be min or max")
        columns.append(column)
        directions.append(direction or RESULT_OBJECTIVES.get(column, MINIMIZE))
    return columns, directions


def _cell(row: dict, column: str) -> str:
    """A row's value as the table shows it: a speedup with its interval, a timed figure in doubt marked."""
    value = row[column]
    if value is None:
        return "-"
    doubt = DOUBT if row.get("in_doubt") and column in TIMED_OBJECTIVES else ""
    if column == "speedup":
        return speedup_text(value, row.get("speedup_low"), row.get("speedup_high")) + doubt
    if isinstance(value, float):
        return f"{value:.4g}{doubt}"
    if isinstance(value, str) and value.startswith("{"):
        return format_bindings(json.loads(value))
    return str(value)
