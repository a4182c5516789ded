"""The designs a survivor of the discovery loop is held against (algorithms.md, section 7): the
original network; the original narrowed to the survivor's FLOPs, the plain way to save as much;
and depthwise-separable convolutions (the bundled example, in every convolution it fits), the
known efficient design. Each is tested over the run's report seeds, paired seed by seed with the
original, and tuned on the run's budget, as a survivor is (core.search.discovery runs them).

The narrowed original is the backbone under a width multiplier whose FLOPs are nearest the
survivor's (core.train.flops), matched where it is trained and where it is timed: a survivor's
test and timing jobs count both networks' FLOPs and find the multiplier. It depends on nothing
else, so it is kept per pair of multipliers (survivors of nearly equal FLOPs share one);
depthwise-separable once per run. Each has an operator row of its own (origin "reference"), so
the Explorer shows it beside the survivors.

The headline a user reads is the survivor's speedup over the narrowed original at equal
accuracy, where both are within the margin of the original by the paired interval rule
(core.train.paired); where that does not hold, it says so plainly. Imports no torch."""

from __future__ import annotations

from resources import EXAMPLES

from ..ir.serialize import read_document
from ..store import Store
from ..store.stored_values import stored_json
from ..train.paired import mean_std, verdict, within

NARROWED, SEPARABLE = "narrowed", "depthwise-separable"
ORIGIN = "reference"  # the operator rows of references


def _flops(row: dict, column: str) -> dict | None:
    """A row's FLOPs (core.train.results.NetworkFlops as JSON), or None when not counted."""
    text = row[column]
    return None if text is None else stored_json(text, "search_candidates", row["id"], column)


def scales(row: dict) -> tuple[float | None, float | None]:
    """A survivor's FLOPs-matched width multipliers: where it is trained, where it is timed."""
    trained, timed = _flops(row, "test_flops"), _flops(row, "e2e_flops")
    return (None if trained is None else trained["scale"]), (None if timed is None else timed["scale"])


def narrowed_name(backbone: str, trained: float | None, timed: float | None) -> str:
    """'resnet18 narrowed (x0.406 trained, x0.203 timed)'."""
    sides = [f"x{s:.3g} {where}" for s, where in ((trained, "trained"), (timed, "timed")) if s is not None]
    return f"{backbone} narrowed ({', '.join(sides)})"


def wanted(store: Store, template: dict, backbone: str, survivor: dict) -> list[tuple[int, dict]]:
    """The references a survivor is held against, as (operator id, the fields its row starts
    with): the original narrowed to its FLOPs where they were counted, and depthwise-separable.
    The same references give the same operator rows."""
    found = []
    trained, timed = scales(survivor)
    if trained is not None or timed is not None:
        name = narrowed_name(backbone, trained, timed)
        operator = store.add_operator(template, name, ORIGIN, network=f"reference: {name}")
        found.append((operator, {"reference": NARROWED, "scale": trained, "deploy_scale": timed}))
    separable = read_document(EXAMPLES / "depthwise_separable.json")
    operator = store.add_operator(
        separable, "depthwise_separable (reference)", ORIGIN, network=f"reference: {SEPARABLE}"
    )
    found.append((operator, {"reference": SEPARABLE}))
    return found


def test_report(row: dict, margin: float) -> dict | None:
    """A row's test figures and the margin's verdict on them in words (None: untested)."""
    if row["test_accuracy"] is None:
        return None
    low, high = row["test_difference_low"], row["test_difference_high"]
    interval = None if low is None else (low, high)
    return {
        "accuracy": row["test_accuracy"],
        "std": row["test_accuracy_std"],
        "difference": row["test_difference"],
        "low": low,
        "high": high,
        "within": within(interval, margin),
        "verdict": verdict(interval, margin),
    }


def figures(row: dict, margin: float) -> dict:
    """What the report shows of a survivor or a reference: its test report, FLOPs where it was
    timed (else where it was tested), tuned latency and speedup over the original."""
    flops = _flops(row, "e2e_flops") or _flops(row, "test_flops")
    return {
        "operator_id": row["operator_id"],
        "name": row["operator_name"],
        "stage": row["stage"],
        "test": test_report(row, margin),
        "flops": None if flops is None else flops["flops"],
        "original_flops": None if flops is None else flops["original"],
        "e2e_latency_ms": row["e2e_latency_ms"],
        "e2e_baseline_ms": row["e2e_baseline_ms"],
        "e2e_speedup": row["e2e_speedup"],
        "timed_alone": bool(row["timed_alone"]),
        "note": row["detail"] or "",
    }


def beside(survivor: dict, rows: list[dict], baseline_test: tuple | None, margin: float) -> list[dict]:
    """The survivor's references (`rows`: the run's), each as figures() gives them with its kind:
    the original (tested once per run, timed in the survivor's own rounds), the narrowed original
    of its FLOPs, and depthwise-separable; those not in the run yet are left out."""
    trained, timed = scales(survivor)
    tested = [a for a in baseline_test or () if a is not None]
    original = {
        "kind": "original",
        "name": "the original",
        "stage": "tuned" if survivor["e2e_baseline_ms"] else "tested",
        "test": {"accuracy": sum(tested) / len(tested), "accuracies": tested} if tested else None,
        "flops": figures(survivor, margin)["original_flops"],
        "e2e_latency_ms": survivor["e2e_baseline_ms"],
        "e2e_speedup": 1.0 if survivor["e2e_baseline_ms"] else None,
        "timed_alone": bool(survivor["timed_alone"]),
        "note": "",
    }
    found = [original]
    for row in rows:
        narrowed = row["reference"] == NARROWED and (row["scale"], row["deploy_scale"]) == (trained, timed)
        if narrowed or row["reference"] == SEPARABLE:
            found.append({**figures(row, margin), "kind": row["reference"]})
    return found


def headline(survivor: dict, references: list[dict], margin: float) -> str:
    """The survivor's speedup over the narrowed original at equal accuracy, or plainly why there
    is none (figures() and beside() give the dictionaries)."""
    points = f"{100 * margin:.2g} point{'' if round(100 * margin, 2) == 1 else 's'}"
    narrowed = next((r for r in references if r["kind"] == NARROWED), None)
    ours, theirs = survivor["test"], narrowed and narrowed["test"]
    missing = [
        what
        for what, absent in (
            (f"{survivor['name']}'s test accuracy", ours is None),
            (f"{survivor['name']}'s tuned speedup", not survivor["e2e_speedup"]),
            ("the FLOPs-matched original", narrowed is None),
            ("its test accuracy", narrowed is not None and theirs is None),
            ("its tuned speedup", narrowed is not None and not narrowed["e2e_speedup"]),
        )
        if absent
    ]
    if missing:
        return f"no headline yet: {', '.join(missing)} not measured"
    assert ours is not None and theirs is not None and narrowed is not None  # none missing
    ratio = survivor["e2e_speedup"] / narrowed["e2e_speedup"]
    name = narrowed["name"]
    against = f"{ratio:.2f}x faster than" if ratio >= 1 else f"{1 / ratio:.2f}x slower than"
    if not ours["within"]:
        also = f"; {name}, of equal FLOPs, is within it" if theirs["within"] else ""
        return f"no speedup at equal accuracy: {survivor['name']} is not shown within {points} of the original{also}"
    if not theirs["within"]:
        return (
            f"{survivor['name']} keeps the original's accuracy where {name}, of equal FLOPs, is not shown to "
            f"(within {points}); it is {against} it and {survivor['e2e_speedup']:.2f}x faster than the original"
        )
    if ratio > 1:
        return (
            f"{ratio:.2f}x faster than {name} at equal accuracy (both within {points} of the original by the "
            f"95% interval; {survivor['e2e_speedup']:.2f}x faster than the original)"
        )
    return f"no speedup at equal accuracy: {name} is as accurate and {1 / ratio:.2f}x faster"


def lines(survivor: dict, references: list[dict]) -> list[str]:
    """One line per network, the survivor first: test accuracy, the paired difference with its
    interval, FLOPs, tuned latency and speedup over the original and over the narrowed one."""
    narrowed = next((r for r in references if r["kind"] == NARROWED), None)
    base = narrowed["e2e_speedup"] if narrowed else None
    return [_line({**survivor, "kind": "survivor"}, base)] + [_line(r, base) for r in references]


def _line(r: dict, narrowed_speedup: float | None) -> str:
    test = r["test"]
    if test is None:
        accuracy = "test accuracy not measured"
    elif "accuracies" in test:  # the original: the pair's other side
        accuracy = f"test {mean_std(test['accuracies'])}"
    else:
        spread = "" if test["std"] is None else f" +- {test['std']:.3f}"
        interval = "" if test["low"] is None else f" [{100 * test['low']:+.1f}, {100 * test['high']:+.1f}]"
        accuracy = f"test {test['accuracy']:.3f}{spread}, {100 * test['difference']:+.1f} points{interval}"
    flops = "" if r["flops"] is None else f"; {r['flops'] / 1e6:.1f} MFLOPs"
    if r["e2e_latency_ms"] and r["e2e_speedup"]:
        timed = f"; {r['e2e_latency_ms']:.2f} ms tuned, {r['e2e_speedup']:.2f}x the original"
        if narrowed_speedup and r["kind"] != NARROWED:
            timed += f", {r['e2e_speedup'] / narrowed_speedup:.2f}x the narrowed"
        timed += "" if r["timed_alone"] else " (timed while other jobs ran)"
    else:
        timed = "; not timed" if r["stage"] in ("tuned", "tested", "within margin") else f"; {r['stage']}"
    name = f"{r['name']} (survivor)" if r["kind"] == "survivor" else r["name"]
    return f"{name}: {accuracy}{flops}{timed}"
