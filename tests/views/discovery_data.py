"""A store as a discovery run leaves it, for the explorer's and the gallery's tests."""

from __future__ import annotations

import json

from core.ir.serialize import read_document
from core.search import references
from core.search.settings import DiscoveryConfig
from core.store import Store
from core.store.searches import candidates, open_run, set_baseline, set_stage
from tests.support import EXAMPLES

TEMPLATE = read_document(EXAMPLES / "conv2d.json")

OPERATORS = ("depthwise_separable", "grouped_conv", "shift_conv", "involution", "mixed_conv")


def discovery_results(path, baseline: float = 0.9) -> dict[str, tuple[float, float]]:
    """What a discovery run leaves: a run whose original network trained to `baseline`, that
    network as an operator scored for accuracy, and candidates scored for accuracy and tuned
    end-to-end speedup. Returns operator name -> (speedup, accuracy)."""
    figures = dict(zip(OPERATORS, [(1.6, 0.85), (1.3, 0.89), (0.8, 0.91), (2.2, 0.62), (1.1, 0.88)]))
    with Store(path) as store:
        template = read_document(EXAMPLES / "conv2d.json")
        run = open_run(store, "k", "mcts on conv2d", {"template": template})
        set_baseline(store, run, baseline)
        original = store.add_operator(template, "conv2d", "baseline")
        store.add_score(original, {"dataset": "digits@16px", "backbone": "resnet18/w16", "accuracy": baseline})
        for name, (speedup, accuracy) in figures.items():
            op = store.add_operator(read_document(EXAMPLES / f"{name}.json"), name, "search:mcts")
            store.add_score(op, {"dataset": "digits@16px", "backbone": "resnet18/w16", "accuracy": accuracy})
            store.add_score(
                op,
                {
                    "dataset": "digits@16px",
                    "backbone": "resnet18/w16",
                    "e2e_latency_ms": 10.0 / speedup,
                    "e2e_baseline_ms": 10.0,
                    "e2e_tuned": True,
                    "deploy": "resnet18/w64@32px",
                },
            )
    return figures


def held_out(difference: float, low: float, high: float) -> dict:
    """Test figures over 3 seeds: 0.95 plus the paired difference from the original, its interval."""
    return {
        "test_accuracy": 0.95 + difference,
        "test_accuracy_std": 0.004,
        "test_difference": difference,
        "test_difference_low": low,
        "test_difference_high": high,
    }


def _flops(flops: int, scale: float) -> str:
    return json.dumps({"flops": flops, "original": 1_110_800_000, "scale": scale, "matched": flops})


def run_with_references(store: Store, narrowed: dict, narrowed_speedup: float, deploy: dict | None = None) -> tuple:
    """A run as the loop leaves it with one survivor (shift_conv as mcts-1: 2.5x the original,
    within 1 point) and its references, the narrowed original (`narrowed`: its test figures, and
    its speedup) and depthwise-separable (2.0x, within), all timed alone, each row's scores as
    its jobs record them; `deploy`: the run's deployment settings (default the loop's). Returns
    (its settings, the run, the survivor's row)."""
    settings = {"template": TEMPLATE, "samples": 4, "tune": True, "seed_cap": 0, "deploy": deploy or {}}
    cfg = DiscoveryConfig.from_dict(settings)  # tested over a fixed count of 3 seeds
    run = open_run(store, cfg.key, "run", cfg.to_dict())
    set_baseline(store, run, 0.96)
    labels = {"dataset": "fashion-mnist@24px", "backbone": "resnet18/w16", "epochs": 10}
    timing = {"e2e_baseline_ms": 10.0, "timed_alone": 1}

    def scored(operator: int, stage: str, speedup: float, test: dict, **fields) -> None:
        set_stage(store, run, operator, stage, e2e_speedup=speedup, e2e_latency_ms=10.0 / speedup, **test, **fields)
        store.add_score(operator, {**labels, "test_seeds": 3, "test_margin": 0.01, **test})
        e2e = {"e2e_latency_ms": 10.0 / speedup, "e2e_baseline_ms": 10.0, "e2e_tuned": True}
        store.add_score(operator, {**labels, **e2e, "deploy": "resnet18/w64@32px"})

    survivor = store.add_operator(read_document(EXAMPLES / "shift_conv.json"), "mcts-1", "search:mcts")
    flops = {"test_flops": _flops(200_000_000, 0.4375), "e2e_flops": _flops(235_300_000, 0.453125)}
    scored(survivor, "tuned", 2.5, held_out(-0.002, -0.006, 0.002), accuracy=0.96, **flops, **timing)
    row = candidates(store, run)[0]
    for operator, fields in references.wanted(store, TEMPLATE, "resnet18", row):
        if fields["reference"] == references.NARROWED:
            scored(operator, "tuned", narrowed_speedup, narrowed, **fields, **timing)
        else:
            scored(operator, "tuned", 2.0, held_out(-0.004, -0.009, 0.001), **fields, **timing)
    return cfg, run, row
