"""The designs a survivor of the discovery loop is held against (docs/papers.md, section 6): the
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

What the report shows of each is read in core.search.summary and said in core.search.report
(the headline: the survivor's speedup over the narrowed original at equal accuracy). Imports
no torch."""

from __future__ import annotations

from resources import EXAMPLES

from ..ir.serialize import read_document
from ..store import Store
from ..store.stored_values import stored_json

NARROWED, SEPARABLE = "narrowed", "depthwise-separable"
ORIGIN = "reference"  # the operator rows of references


def flops(row: dict, column: str) -> dict | None:
    """A row's FLOPs (core.train.results.NetworkFlops as JSON), or None when not counted."""
    text = row[column]
    return None if text is None else stored_json(text, "search_candidates", row["id"], column)


def scales(row: dict) -> tuple[float | None, float | None]:
    """A survivor's FLOPs-matched width multipliers: where it is trained, where it is timed."""
    trained, timed = flops(row, "test_flops"), flops(row, "e2e_flops")
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
