"""Running a search: ask the strategy, save every candidate in the store with its
origin, evaluate it (nothing, Fisher Potential or proxy training, in this process),
tell the score back, and queue measurement jobs when tuning is asked for.

The same function serves `tessera search` (in a spawned process) and the GUI
(as a "search" job run by a worker), so both write the same rows."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from ..analysis.summary import summarize
from ..compile.payloads import MeasurePayload
from ..data.specs import BackboneSpec
from ..ir.bindings import format_bindings
from ..ir.serialize import graph_from_document
from ..jobs.code_paths import resolve
from ..jobs.queue import JobQueue
from ..jobs.registry import job_kinds
from ..jobs.submit import PlannedJob
from ..store import Store
from ..train.payloads import FisherPayload, TrainPayload
from ..train.results import FisherResult
from ..train.settings import proxy_task
from .base import Budget, Strategy
from .payloads import SearchPayload
from .results import SearchResult, tally
from .settings import SearchConfig, SearchSpace
from .strategies import STRATEGIES

#: the convolutions a searched operator replaces in a network (builds it in torch: resolved
#: only where a search runs, so importing this module loads no torch)
SEARCHED_LAYERS = "core.data.swap_convs:searched_layers"
SCORE_OF = {"fisher": "fisher_potential", "train": "accuracy"}


@dataclass(frozen=True)
class SearchRequest:
    """The window's Search panel: run one search as a job (its settings checked before it is
    queued, through core.jobs.submit)."""

    config: SearchConfig

    def plan(self, store: Store) -> tuple[list[PlannedJob], list[str]]:
        return [PlannedJob(SearchPayload(self.config.to_dict()))], []


def make_strategy(space: SearchSpace, networks: Sequence[BackboneSpec] = (), scores: str = "bounded") -> Strategy:
    """The configured strategy; one that searches network-wide (Strategy.network_wide) judges
    candidates at every searched layer of `networks` (the proxy and the deployment networks).
    `scores`: what it will be told, "bounded" (accuracy, rewards) or "unbounded" (Fisher
    Potential), for a strategy whose row says its rewards need a fixed scale."""
    template = graph_from_document(space.template, source="the search template")
    entry = STRATEGIES[space.strategy]
    cls = cast("type[Strategy]", resolve(entry.target))
    budget = Budget(space.budget_flops, space.budget_params, space.max_primitives)
    kwargs: dict = {"scores": scores} if entry.scaled else {}
    if cls.network_wide and networks:
        layers_of = resolve(SEARCHED_LAYERS)
        kwargs["layers"] = sum((layers_of(spec) for spec in networks), Counter())
    return cls(template, budget, seed=space.seed, **kwargs)


class _Inner:
    """The context an in-process evaluation sees: the search's cancel flag, no progress rows."""

    def __init__(self, cancelled: Callable[[], bool]):
        self.cancelled = cancelled

    def progress(self, fraction: float, message: str = "") -> None:
        pass


def run_search(
    config: dict,
    store_path: str,
    progress: Callable[[float, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> SearchResult:
    """Run until `samples` candidates were found, `minutes` passed, the strategy is
    exhausted or the caller cancels; returns counts and the strategy's statistics."""
    cfg = SearchConfig.from_dict(config)
    networks = () if cfg.evaluate == "none" else (proxy_task(cfg.evaluation)[0].spec,)
    strategy = make_strategy(cfg, networks, "unbounded" if cfg.evaluate == "fisher" else "bounded")
    progress = progress or (lambda f, m: None)
    cancelled = cancelled or (lambda: False)
    evaluate = None
    if cfg.evaluate != "none":
        settings, training = proxy_task(cfg.evaluation)
        kind = job_kinds()[cfg.evaluate]
        handler = resolve(kind.handler)

        def evaluate(doc: dict) -> FisherResult:
            payload = (
                FisherPayload(doc, settings) if cfg.evaluate == "fisher" else TrainPayload(doc, settings, training)
            )
            return handler(payload.to_dict(), _Inner(cancelled))

    start, found, scored, queued, failures = time.monotonic(), 0, 0, 0, []
    with Store(store_path) as store:
        queue = JobQueue(store)
        local = store.add_device("local", "local") if cfg.tune_trials is not None else None
        while not cancelled():
            elapsed = time.monotonic() - start
            if cfg.samples is not None and found >= cfg.samples:
                break
            if cfg.minutes is not None and elapsed >= cfg.minutes * 60:
                break
            batch = strategy.ask(1)
            if not batch:
                break  # the space (within budget) is exhausted
            for c in batch:
                found += 1
                doc = c.document
                operator_id = store.add_operator(
                    c.graph, f"{strategy.name}-{c.key[:8]}", c.origin, c.info.get("sequence")
                )
                if evaluate is not None:
                    try:  # a candidate that cannot be evaluated (or scores NaN) scores nothing
                        score = evaluate(doc).score
                        store.add_score(operator_id, score)
                    except Exception as e:
                        failures.append(f"{c.key[:8]}: {e}")
                    else:
                        strategy.tell(c.key, getattr(score, SCORE_OF[cfg.evaluate]) or 0.0)  # diverged: no accuracy
                        scored += 1
                if cfg.tune_trials is not None:
                    bindings = {**c.graph.bindings, **cfg.measure_bindings}
                    check = summarize(c.graph, bindings)
                    if not check.ok:  # valid at the template's sizes, not at these
                        failures.append(
                            f"{c.key[:8]}: not measurable at {format_bindings(bindings)}: "
                            + "; ".join(check.messages())
                        )
                    else:
                        queue.submit(
                            "measure",
                            MeasurePayload(doc, bindings, tune_trials=cfg.tune_trials).to_dict(),
                            operator_id=operator_id,
                            device_id=local,
                        )
                        queued += 1
                # SearchConfig takes a number of samples or a time limit
                fraction = found / cfg.samples if cfg.samples else elapsed / (60 * (cfg.minutes or 1.0))
                progress(min(fraction, 1.0), tally(found, scored, queued))
    return SearchResult(found, scored, queued, tuple(failures[:20]), round(time.monotonic() - start, 2), strategy.stats)


def search_job(payload: dict, ctx) -> SearchResult:
    """Job handler for kind "search" (the GUI's Search panel)."""
    return run_search(SearchPayload.from_dict(payload).config, str(ctx.store.path), ctx.progress, ctx.cancelled)
