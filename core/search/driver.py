"""Running a search: ask the strategy, save every candidate in the store with its
origin, evaluate it (nothing, Fisher Potential or proxy training, in this process),
tell the score back, and queue measurement jobs when tuning is asked for.

The same function serves `tessera search` (in a spawned process) and the GUI
(as a "search" job run by a worker), so both write the same rows."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from ..analysis.summary import summarize
from ..compile.payloads import MeasurePayload
from ..data.specs import BackboneSpec
from ..ir.bindings import format_bindings
from ..ir.serialize import graph_from_document
from ..jobs.entry_points import resolve
from ..jobs.queue import JobQueue
from ..jobs.registry import job_kinds
from ..jobs.submit import PlannedJob
from ..store import Store
from ..train.payloads import FisherPayload, TrainPayload
from ..train.results import FisherResult
from ..train.settings import proxy_task
from .base import Budget, SearchError, Strategy
from .payloads import SearchPayload
from .results import SearchResult, tally
from .strategies import EVALUATIONS, STRATEGIES

#: the convolutions a searched operator replaces in a network (builds it in torch: resolved
#: only where a search runs, so importing this module loads no torch)
SEARCHED_LAYERS = "core.data.replace:searched_layers"
SCORE_OF = {"fisher": "fisher_potential", "train": "accuracy"}


@dataclass
class SearchConfig:
    template: dict
    strategy: str = "canvas"
    budget_flops: float | None = 1.0
    budget_params: float | None = None
    max_primitives: int = 8
    seed: int = 0
    samples: int | None = 20
    minutes: float | None = None
    evaluate: str = "none"
    tune_trials: int | None = None  # queue a measure job per candidate when set (0: untuned)
    measure_bindings: dict = field(default_factory=dict)
    evaluation: dict = field(default_factory=dict)  # EvalSettings / TrainConfig fields

    @classmethod
    def from_dict(cls, values: dict) -> SearchConfig:
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise SearchError(f"unknown search setting(s): {', '.join(unknown)}")
        cfg = cls(**values)
        if cfg.strategy not in STRATEGIES:
            raise SearchError(f"strategy must be one of {', '.join(STRATEGIES)}, got {cfg.strategy!r}")
        if cfg.evaluate not in EVALUATIONS:
            raise SearchError(f"evaluate must be one of {', '.join(EVALUATIONS)}, got {cfg.evaluate!r}")
        if cfg.samples is None and cfg.minutes is None:
            raise SearchError("give a number of samples or a time limit in minutes")
        for name in ("samples", "max_primitives", "tune_trials"):
            value = getattr(cfg, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise SearchError(f"{name} must be a whole number >= 0, got {value!r}")
        for name in ("budget_flops", "budget_params", "minutes"):
            value = getattr(cfg, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise SearchError(f"{name} must be a positive number, got {value!r}")
        return cfg


@dataclass(frozen=True)
class SearchRequest:
    """The window's Search panel: run one search as a job (its settings checked before it is
    queued, through core.jobs.submit)."""

    config: dict

    def plan(self, store: Store) -> tuple[list[PlannedJob], list[str]]:
        SearchConfig.from_dict(self.config)
        return [PlannedJob(SearchPayload(self.config))], []


def make_strategy(cfg: SearchConfig, networks: Sequence[BackboneSpec] = ()) -> Strategy:
    """The configured strategy; one that searches network-wide (Strategy.network_wide) judges
    candidates at every searched layer of `networks` (the proxy and the deployment networks)."""
    template = graph_from_document(cfg.template, source="the search template")
    cls = cast("type[Strategy]", resolve(STRATEGIES[cfg.strategy].target))
    budget = Budget(cfg.budget_flops, cfg.budget_params, cfg.max_primitives)
    kwargs: dict = {}
    if cfg.strategy == "mcts":  # its rewards need a fixed scale: accuracy is bounded, Fisher Potential is not
        kwargs["scores"] = "unbounded" if cfg.evaluate == "fisher" else "bounded"
    if cls.network_wide and networks:
        layers_of = resolve(SEARCHED_LAYERS)
        kwargs["layers"] = sum((layers_of(spec) for spec in networks), Counter())
    return cls(template, budget, seed=cfg.seed, **kwargs)


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
    strategy = make_strategy(cfg, () if cfg.evaluate == "none" else (proxy_task(cfg.evaluation)[0].spec,))
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
