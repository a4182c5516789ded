"""bench_discovery's `strategies` section: does MCTS beat random sampling and Canvas's sampler on
the same budget (Syno's claim)? The discovery loop (`tessera discover`'s settings, 2 workers, no
test over seeds and no end-to-end tuning, so the whole budget goes to proposing, screening and
training) runs for the same minutes per strategy and seed, each run in a store of its own (the
early stop's best curve would otherwise carry from one run into the next), the strategies taking
turns within a seed so they share the machine's conditions. Per run: candidates proposed (each a
distinct operator by its strategy's canonical form), how many kinds of design they fall into
(bench_discovery.design), how many were trained, how many came within the margin of the original's
validation accuracy (and per hour), when the first did, and the best validation accuracy at each
quarter of the budget (by when its training finished); then each strategy's mean over the seeds.

A run already in the folder that reached its time is read, not run again, so seeds can be added
later; one that did not is run again from the start.

Also `surrogate`: the exploration constants of MCTS (core.search.mcts) on a surrogate of the
loop's sparse rewards, in seconds: chains of share, reduce and shift only (the 60-minute run's
survivors, ShiftNet-like) earn 1, every other at most 0.1."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from app.cli import build_parser
from app.cli.discover import config_of
from core.ir.serialize import graph_from_document, load_operator
from core.jobs.queue import JobQueue
from core.jobs.supervisor import Supervisor
from core.search import mcts
from core.search.base import Budget, Strategy
from core.search.chain import chain_steps
from core.search.discovery import run_discovery
from core.search.mcts import SynoMCTS
from core.search.settings import DiscoveryConfig
from core.search.syno import SynoRandom
from core.store import Store
from core.store.searches import candidates, find_run
from tests.support import EXAMPLES

STRATEGIES = ("mcts", "random", "canvas")
QUARTERS = (0.25, 0.5, 0.75, 1.0)


def compare(
    strategies: tuple[str, ...],
    seeds: int,
    minutes: float,
    folder: Path,
    task: list[str],
    design: Callable,
    workers: int = 2,
) -> None:
    """Run (or read) every strategy with seeds 0..seeds-1 for `minutes` each, stores in `folder`;
    `task`: `tessera discover` options naming the proxy task (dataset, resolution, ...)."""
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"Strategy comparison: `tessera discover {' '.join(task)} --minutes {minutes:g} --no-tune --seeds 0` "
        f"per strategy and seed, {workers} workers, stores in {folder}"
    )
    rows = []
    for seed in range(seeds):
        for strategy in strategies:
            args = ["discover", "--strategy", strategy, "--seed", str(seed), "--minutes", f"{minutes:g}"]
            args += ["--no-tune", "--seeds", "0", "--workers", str(workers), *task]
            config = config_of(build_parser("discover").parse_args(args))
            path = folder / f"{strategy}-seed{seed}.db"
            if not _finished(path, config, minutes):
                path.unlink(missing_ok=True)
                _run(config, path, workers, f"{strategy}, seed {seed}")
            rows.append(figures(path, config, minutes, design))
    _table(rows, minutes)


def _finished(path: Path, config: DiscoveryConfig, minutes: float) -> bool:
    """The store holds this run and its candidates went on until (nearly) the end of its time."""
    if not path.exists():
        return False
    with Store(path) as store:
        run = find_run(store, config.key)
        if run is None:
            return False
        created = store.db.table("searches").get(run.id)["created"]
        updated = [row["updated"] for row in candidates(store, run)]
        return bool(updated) and max(updated) - created >= 0.95 * minutes * 60


def _run(config: DiscoveryConfig, path: Path, workers: int, label: str) -> None:
    supervisor = Supervisor(path, workers=workers)
    supervisor.start()
    shown = [time.monotonic()]

    def progress(fraction: float, message: str) -> None:
        if time.monotonic() - shown[0] >= 300:  # a line every 5 minutes
            shown[0] = time.monotonic()
            print(f"    {label}: {fraction:.0%}, {message}", flush=True)

    start = time.monotonic()
    try:
        run_discovery(config, str(path), progress, tick=supervisor.poll)
    finally:
        supervisor.stop()
    print(f"  {label}: ran {time.monotonic() - start:.0f} s", flush=True)


def figures(path: Path, cfg: DiscoveryConfig, minutes: float, design: Callable) -> dict:
    """One run's figures from its store."""
    with Store(path) as store:
        run = find_run(store, cfg.key)
        assert run is not None and run.baseline_accuracy is not None
        start = store.db.table("searches").get(run.id)["created"]
        rows = candidates(store, run)
        queue = JobQueue(store)
        trained = [(queue.get(r["job_id"]).finished - start, r) for r in rows if r["accuracy"] is not None]
        floor = run.baseline_accuracy - cfg.margin
        within = sorted(t for t, r in trained if r["accuracy"] >= floor)
        best = [max((r["accuracy"] for t, r in trained if t <= q * minutes * 60), default=None) for q in QUARTERS]
        designs = {design(graph_from_document(store.operator(r["operator_id"])["document"])) for r in rows}
    return {
        "strategy": cfg.strategy,
        "seed": cfg.seed,
        "original": run.baseline_accuracy,
        "proposed": len(rows),
        "designs": len(designs),
        "trained": len(trained),
        "within": len(within),
        "per hour": len(within) / (minutes / 60),
        "first": within[0] / 60 if within else None,
        "best": best,
    }


def _table(rows: list[dict], minutes: float) -> None:
    quarters = " | ".join(f"best at {q * minutes:g} min" for q in QUARTERS)
    print(
        "| strategy | seed | original | proposed | designs | trained | within margin | per hour | first (min) | "
        f"{quarters} |"
    )
    print("|---" * (9 + len(QUARTERS)) + "|")
    for r in rows:
        print(
            f"| {r['strategy']} | {r['seed']} | {r['original']:.3f} | {r['proposed']} | {r['designs']} | "
            f"{r['trained']} | {r['within']} | {r['per hour']:.1f} | {_number(r['first'], '.1f')} | "
            + " | ".join(_number(b, ".3f") for b in r["best"])
            + " |"
        )
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        mine = [r for r in rows if r["strategy"] == strategy]
        firsts = [r["first"] for r in mine if r["first"] is not None]
        bests = [[r["best"][i] for r in mine if r["best"][i] is not None] for i in range(len(QUARTERS))]
        print(
            f"| **{strategy}, mean of {len(mine)}** | | {_mean([r['original'] for r in mine], '.3f')} | "
            + " | ".join(_mean([r[k] for r in mine], ".1f") for k in ("proposed", "designs", "trained", "within"))
            + f" | {_mean([r['per hour'] for r in mine], '.1f')} | "
            + f"{_mean(firsts, '.1f')} ({len(firsts)} of {len(mine)} found one) | "
            + " | ".join(_mean(b, ".3f") for b in bests)
            + " |"
        )


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _mean(values: list[float], spec: str) -> str:
    if not values:
        return "-"
    spread = f" +- {statistics.stdev(values):{spec}}" if len(values) > 1 else ""
    return f"{statistics.mean(values):{spec}}{spread}"


# -- the exploration constants on a surrogate reward ------------------------------------------------


def shiftnet_like(chain_ops: set[str]) -> bool:
    """Pointwise convolutions with pixels moved by rolls: the 60-minute run's survivors."""
    return chain_ops <= {"share", "reduce", "shift"} and "shift" in chain_ops


def _hits(strategy: Strategy, proposals: int) -> int:
    """How many ShiftNet-like chains the strategy proposes, told 1 for each and a random reward
    below 0.1 (squared uniform, as squared accuracies far below the original's) for the others."""
    noise, hits = random.Random(1), 0
    for _ in range(proposals):
        batch = strategy.ask(1)
        if not batch:
            break
        hit = shiftnet_like({s.op for s in chain_steps(batch[0].graph)})
        hits += hit
        strategy.tell(batch[0].key, 1.0 if hit else 0.1 * noise.random() ** 2)
    return hits


#: (exploration, widening) pairs the exploration section tries: the constant at today's widening,
#: then the widening at the chosen constant
SURROGATE = (*((c, 1.5) for c in (1.41, 1.0, 0.7, 0.5, 0.35, 0.2)), (0.2, 0.75), (0.2, 3.0))


def surrogate(pairs: tuple[tuple[float, float], ...] = SURROGATE, seeds: int = 5, proposals: int = 150) -> None:
    """MCTS with each exploration constant and progressive widening against random sampling:
    ShiftNet-like chains among the first `proposals` (conv2d, at most 8 primitives)."""
    conv, budget = load_operator(EXAMPLES / "conv2d.json"), Budget(max_primitives=8)
    print(
        f"MCTS exploration on a surrogate reward (ShiftNet-like chains earn 1, others under 0.1): "
        f"found among {proposals} proposals, mean of seeds 0-{seeds - 1}"
    )
    kept = mcts.EXPLORATION, mcts.WIDENING
    try:
        for constant, widening in pairs:
            mcts.EXPLORATION, mcts.WIDENING = constant, widening
            found = [_hits(SynoMCTS(conv, budget, seed=seed), proposals) for seed in range(seeds)]
            print(f"  exploration {constant:g}, widening {widening:g}: {statistics.mean(found):.1f} {found}")
    finally:
        mcts.EXPLORATION, mcts.WIDENING = kept
    found = [_hits(SynoRandom(conv, budget, seed=seed), proposals) for seed in range(seeds)]
    print(f"  random sampling: {statistics.mean(found):.1f} {found}")
