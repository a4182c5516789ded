"""A store as a discovery run leaves it, for the explorer's and the gallery's tests."""

from __future__ import annotations

from core.ir.serialize import read_document
from core.store import Store
from core.store.searches import open_run, set_baseline
from tests.support import EXAMPLES

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
