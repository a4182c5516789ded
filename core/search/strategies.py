"""What a search offers, one table each: the strategies (key, label, and the class that
proposes candidates, imported only when a search runs) and the evaluations that score
candidates. `tessera search`, `tessera discover`, the window's search settings and the
driver all read these tables; adding a strategy is one row here (and its class), and the row
carries all the driver needs to make it (tests/core/test_search_strategies.py checks the table
against the classes)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StrategyEntry:
    key: str  # what configs, the CLI and stored runs name it by; its candidates' origin is search:<key>
    label: str  # what the window shows
    target: str  # 'module:Class' of its core.search.base.Strategy
    #: whether its rewards need a fixed scale: it is made with `scores`, "bounded" (accuracy) or
    #: "unbounded" (Fisher Potential), as the search scores its candidates
    scaled: bool = False


STRATEGIES = {
    entry.key: entry
    for entry in (
        StrategyEntry(
            "canvas", "Canvas sampler (random micro-DAGs with solvers)", "core.search.canvas_sampler:CanvasSampler"
        ),
        StrategyEntry("mcts", "MCTS with canonicalization (Syno)", "core.search.mcts:SynoMCTS", scaled=True),
        StrategyEntry(
            "random", "Random sampling in Syno's space (MCTS's actions, no statistics)", "core.search.syno:SynoRandom"
        ),
        StrategyEntry("sequences", "Transformation sequences (NAS-PTE)", "core.search.sequences:SequenceSearch"),
    )
}

#: how a search scores each candidate: key -> label
EVALUATIONS = {"none": "FLOPs and parameters only", "fisher": "Fisher Potential", "train": "Proxy training"}
