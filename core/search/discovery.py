"""The discovery loop, as the papers run it: each candidate passes cheap stages before
expensive ones, every stage a job in the queue (so local workers or a Ray cluster run several
candidates at once) and every outcome kept in the store.

  1. Fisher Potential at initialisation against the original network's (NAS-PTE: a candidate
     below `fisher_threshold` x the original's is screened out), for every strategy.
  2. Proxy training, early-stopped by Canvas's rule against the best accuracy curve stored so
     far for this dataset, backbone and epoch budget (so it carries across candidates and runs),
     and stopped as "too slow" when an epoch would take SLOW times the original network's.
  3. Syno's margin on validation, by the seed rule: a candidate shown more than `margin` below
     the original network's validation accuracy (trained once per run, the template standing
     in for every convolution) is out; one within, or undecided, goes on to the test.
  4. Its reported accuracy, apart from everything that selected it: trained again with
     `test_seeds` seeds (those after the run's seed, core.train.seeds), then more up to
     `seed_cap` until core.train.sequential's rule decides (a fixed count with the cap at 0),
     and tested on the test split, paired seed by seed with the original's (tested once per
     run over the rule's first look; a later seed the first candidate's job that needs it
     trains, and the store shares with the others), the interval judged against the margin: a
     survivor is one whose verdict says within; one shown worse, or undecided, ends there. Early stop, the margin and the
     ranking read validation accuracy only.
  5. Tuned end-to-end latency of the network with the candidate against the tuned original
     (core.networks.end_to_end).
  6. Its references (core.search.references): the original narrowed to its FLOPs and
     depthwise-separable, tested over the same seeds as it is trained, and tuned on the same
     budget, once each.
  7. Its figure timed alone: a survivor is tuned while other candidates train (the schedules
     it finds are what matters then). Once the run has nothing else in flight (its time or
     candidates spent), every survivor is timed again, one at a time, from the schedules in the
     tuning database (no new trials), and every reference is tuned and timed, one at a time: the
     loop's figures are taken with no job of the run sharing the machine, and say so
     (timed_alone). The references are tuned alone too, which can only favour them.
The strategy is told a reward for every candidate as soon as its outcome is known (Syno's
reward, the FLOPs cap being the strategy's own hard limit; core.search.reward.outcome_reward):
its proxy accuracy (at the stop for one stopped early) normalised against the original's, a
small hint from the Fisher Potential for one screened out or too slow, 0 for one that diverged
or failed, each times the optional FLOPs penalty, so MCTS learns from every stage. An accuracy
known before the original's is told once the original's is.

Asking and telling are asynchronous: up to `in_flight` candidates are between stages at any
time, and results arrive in any order. A run is kept in the store under the key of its
settings (core.store.searches); running the same search again resumes it: candidates already
there are neither proposed nor evaluated again, and those left between stages carry on.

The modules: settings.py (DiscoveryConfig), stages.py (Stage, Phase, the counts), loop.py (the
state machine), summary.py (the typed RunSummary), report.py (the one renderer); this one runs
the rounds: the clock, the phase, the progress."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..store import Store
from ..store.searches import open_run
from .driver import make_strategy
from .loop import Loop
from .report import progress_text
from .settings import DiscoveryConfig
from .stages import Phase
from .summary import RunSummary, summarize

Progress = Callable[[float, str], None]


def run_discovery(
    cfg: DiscoveryConfig,
    store_path: str,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    tick: Callable[[], None] = lambda: None,
    poll_s: float = 0.5,
    report: Callable[[RunSummary], None] | None = None,
) -> RunSummary:
    """Run (or resume) the loop until the time or candidate budget is spent, the strategy runs
    out, or the caller cancels; jobs are run by whatever workers serve the store (`tick` is
    called each round, e.g. to poll a Supervisor; `report` with the summary so far). The time
    budget counts from when the original network's figures are known: training it is not spent
    from it. Returns the final summary."""
    progress = progress or (lambda fraction, message: None)
    cancelled = cancelled or (lambda: False)
    strategy = make_strategy(cfg, (cfg.settings.spec, *([cfg.deployment.spec] if cfg.tune else [])))
    start, clock = time.monotonic(), None  # clock: when the original's figures were known
    with Store(store_path) as store:
        loop = Loop(store, cfg, strategy, open_run(store, cfg.key, cfg.label, cfg.to_dict()))

        def summary(phase: Phase) -> RunSummary:
            now = time.monotonic()
            spent = 0.0 if clock is None else now - clock
            return summarize(store, loop.run, cfg, phase, now - start, spent, loop.exhausted, strategy.stats)

        while True:
            if cancelled():
                loop.cancel()
                return summary(Phase.STOPPED)
            tick()
            loop.advance()
            if clock is None and loop.original_known:
                clock = time.monotonic()
            spent = 0.0 if clock is None else time.monotonic() - clock
            # 0 minutes: a resumed run finishes what it has, proposing nothing
            out_of_time = cfg.minutes is not None and (cfg.minutes == 0 or spent >= 60 * cfg.minutes)
            if not out_of_time:
                loop.refill(cfg.samples)
            finished = out_of_time or loop.exhausted or loop.full(cfg.samples)
            if finished and not loop.busy() and not loop.time_alone():
                return summary(Phase.FINISHED)
            now = summary(_phase(loop, clock is not None, finished))
            progress(_fraction(cfg, now), progress_text(now))
            if report is not None:
                report(now)
            time.sleep(poll_s)


def _phase(loop: Loop, original_known: bool, finished: bool) -> Phase:
    if loop.settling:
        return Phase.TIMING_ALONE
    if not original_known:
        return Phase.ORIGINAL
    return Phase.FINISHING if finished else Phase.PROPOSING


def _fraction(cfg: DiscoveryConfig, summary: RunSummary) -> float:
    """How far the run is through its budget: its time, else its candidates."""
    if summary.budget_seconds is not None:
        return min(summary.spent_seconds / summary.budget_seconds, 1.0) if summary.budget_seconds else 1.0
    return min(summary.judged / cfg.samples, 1.0) if cfg.samples else 0.0
