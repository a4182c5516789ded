"""MetaSchedule tuning of one operator, its database kept per operator, sizes and device.

The database directory is named by the operator's content hash and its
bindings, so a later run (in any process) finds the trials already measured:
it only tunes the part of the trial budget not yet spent, and with nothing
left it takes the recorded schedule straight away: the fastest that computes the
right numbers (core.compile.checked). Trials are read back in the order they were
measured (core.compile.database) for convergence plots."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import tvm
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms

from .build_pool import pooled_builder
from .checked import Benches, Kernel, checked_records
from .database import recorded_trials
from .errors import TuningError
from .place import Place, ThisMachine
from .warm import warm_tensor_intrin

COST_MODELS = ("xgb", "random")
TRIALS_PER_BATCH = 32  # candidates MetaSchedule searches, builds and measures at a time (fewer if fewer are left)
_LOGGER = "tvm.s_tir.meta_schedule"


def tuning_root() -> Path:
    """~/.cache/tessera/tuning (honouring XDG_CACHE_HOME)."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "tessera" / "tuning"


def tuning_dir(content_hash: str, bindings: Mapping[str, int], device: str, root: Path | None = None) -> Path:
    """<root>/<device>/<hash>-<bindings>, e.g. .../local/3f2a9c...-C_in=64,C_out=64,H=56,K=3,N=1,W=56."""
    sizes = ",".join(f"{k}={v}" for k, v in sorted(bindings.items()))
    return (root or tuning_root()) / device / f"{content_hash[:20]}-{sizes}"


@dataclass(frozen=True)
class Tuning:
    work_dir: Path
    schedule: tvm.IRModule | None  # the fastest right record's schedule; None if no trial gave one
    trials: list[tuple[int, float | None]]  # (index, latency ms) in measured order; None = failed
    new_trials: int  # measured by this call (0: everything came from the database)
    cost_model: str | None = None  # MetaSchedule's cost model; None for a search without one
    schedule_ms: float | None = None  # the latency recorded for `schedule`
    wrong: int = 0  # faster records skipped because they computed wrong numbers

    @property
    def best_ms(self) -> float | None:
        done = [latency for _, latency in self.trials if latency is not None]
        return min(done) if done else None

    @property
    def chosen_ms(self) -> float | None:
        """The trial latency of `schedule`: its checked record's, or the best trial's where a
        search keeps its best (core.compile.kernels.gspc)."""
        return self.schedule_ms if self.schedule_ms is not None else self.best_ms


#: on_progress(done, total, what): trials done (fractional within a batch) of the budget, and the phase
OnProgress = Callable[[float, int, str], None]


def tune(
    mod: tvm.IRModule,
    target: tvm.target.Target,
    work_dir: Path,
    trials: int,
    *,
    cost_model: str = "xgb",
    seed: int = 0,
    on_progress: OnProgress | None = None,
    check_cancelled: Callable[[], None] | None = None,
    place: Place | None = None,
) -> Tuning:
    """Spend what is left of a `trials` budget on `mod` (its own earlier trials count), then
    return the fastest schedule that computes what TVM's default does (core.compile.checked).
    `on_progress(done, trials, what)` follows each phase of each batch; `check_cancelled()` may
    raise there to stop tuning (trials measured so far are kept). Trials run and are checked on
    this CPU, or at `place` (core.compile.place: on an RPC device, a trial whose server dies
    fails alone; the next ones go to the servers still there)."""
    place = place or ThisMachine(target)
    if cost_model not in COST_MODELS:
        raise TuningError(f"unknown cost model {cost_model!r} (use {' or '.join(COST_MODELS)})")
    spent = len(recorded_trials(work_dir, mod))
    remaining = trials - spent
    if remaining > 0:
        work_dir.mkdir(parents=True, exist_ok=True)
        warm_tensor_intrin()
        _prepare_logging()
        progress = _Progress(spent, trials, on_progress, check_cancelled)
        callbacks = [*ms.measure_callback.MeasureCallback.create("default"), progress]
        try:
            with pooled_builder() as builder:
                ms.tune_tir(
                    mod,
                    target,
                    str(work_dir),
                    max_trials_global=remaining,
                    num_trials_per_iter=min(TRIALS_PER_BATCH, remaining),
                    cost_model=_cost_model(cost_model),
                    strategy=_search(remaining),
                    space=design_space(mod, target),
                    seed=seed,
                    measure_callbacks=callbacks,
                    builder=progress.builder(builder),
                    runner=progress.runner(place.runner()),
                )
        except (RuntimeError, ValueError) as e:  # TVM's errors; ValueError: a failed check
            if progress.stopped is not None:  # TVM wraps what the callback raised; re-raise it as it was
                raise progress.stopped from None
            raise TuningError(f"MetaSchedule failed (logs in {work_dir / 'logs'}): {e}") from None
    records = recorded_trials(work_dir, mod)
    if not any(latency is not None for latency in records):
        return Tuning(work_dir, None, list(enumerate(records)), max(remaining, 0), cost_model)
    chosen = checked_records([Kernel("main", mod)], Benches(place), work_dir)["main"]
    try:
        schedule = chosen.schedule(mod)
    except (RuntimeError, ValueError, TypeError) as e:  # TVM raises these through its FFI
        raise TuningError(
            f"the schedule chosen in {work_dir} does not apply to this kernel ({e}); delete that folder to tune again"
        ) from None
    return Tuning(
        work_dir,
        schedule,
        list(enumerate(records)),
        max(remaining, 0),
        cost_model,
        chosen.latency_ms,
        chosen.wrong,
    )


def tune_kernels(
    kernels: list[tuple[str, tvm.IRModule, int]],
    target: tvm.target.Target,
    work_dir: Path,
    trials: int,
    *,
    cost_model: str = "xgb",
    seed: int = 0,
    on_progress: OnProgress | None = None,
) -> int:
    """Several kernels (name, module, how often it runs) sharing one `trials` budget and one
    database in `work_dir`, as MetaSchedule tunes a network's tasks: each kernel gets a batch
    in turn, then the gradient task scheduler spends the rest where it gains most. Trials of
    these kernels already in `work_dir` count (the database may hold other kernels too).
    `on_progress(done, trials, what)` follows each phase of each batch. Returns the trials run."""
    if cost_model not in COST_MODELS:
        raise TuningError(f"unknown cost model {cost_model!r} (use {' or '.join(COST_MODELS)})")
    remaining = trials - len(recorded_trials(work_dir, *(mod for _, mod, _ in kernels)))
    if remaining <= 0 or not kernels:
        return 0
    work_dir.mkdir(parents=True, exist_ok=True)
    warm_tensor_intrin()
    _prepare_logging()
    per_kernel = max(1, remaining // len(kernels))
    names = [name for name, *_ in kernels]
    contexts = [
        ms.TuneContext(
            mod,
            target=target,
            space_generator=design_space(mod, target),
            task_name=name,
            search_strategy=_search(per_kernel),
            rand_state=state,
            logger=logger,
        )
        for (name, mod, _), state, logger in zip(
            kernels,
            ms.utils.fork_seed(seed, n=len(kernels)),
            ms.logging.get_loggers_from_work_dir(str(work_dir), names),
        )
    ]
    progress = _Progress(trials - remaining, trials, on_progress, None)
    try:
        with pooled_builder() as builder:
            ms.tune.tune_tasks(
                tasks=contexts,
                task_weights=[float(weight) for *_, weight in kernels],
                work_dir=str(work_dir),
                max_trials_global=remaining,
                num_trials_per_iter=min(TRIALS_PER_BATCH, per_kernel),
                cost_model=_cost_model(cost_model),
                measure_callbacks=[*ms.measure_callback.MeasureCallback.create("default"), progress],
                builder=progress.builder(builder),
                runner=progress.runner(ThisMachine(target).runner()),
            )
    except (RuntimeError, ValueError) as e:  # TVM's errors; ValueError: a failed check
        raise TuningError(f"MetaSchedule failed (logs in {work_dir / 'logs'}): {e}") from None
    return progress.done - (trials - remaining)  # fewer than asked when a space ran out of schedules


def design_space(mod: tvm.IRModule, target: tvm.target.Target) -> ms.space_generator.SpaceGenerator:
    """MetaSchedule's design space for the target, or, where TVM 0.27 cannot build it for this
    kernel, the same space without multi-level tiling's write reuse. That reuse computes a tiled
    block's consumer at the block's tiles (reverse_compute_at) without checking that it can,
    and fails the whole tuning when it cannot: on a concatenation of two computed parts ("all
    the producer(s) ... under the target loop": operators with a concat, sequences split into
    parts) and on a consumer reading its producer at a shifted index ("TensorRegion pattern
    match failed: v_i3 - 31": a roll's wrapped read), which also failed a network's tuning
    after most of its budget was spent. The default is tried first (its space is built once
    more when tuning starts: milliseconds)."""
    space = ms.TuneContext(mod, target=target, space_generator="post-order-apply", task_name="main").space_generator
    try:
        space.generate_design_space(mod)
        return space
    except (RuntimeError, ValueError):  # TVM's ScheduleError, or a failed check in the primitive
        pass
    rules = [
        ms.schedule_rule.MultiLevelTiling(structure="SSRSRS", max_innermost_factor=64)  # TVM's DefaultLLVM, no reuse
        if type(rule) is ms.schedule_rule.MultiLevelTiling
        else rule
        for rule in space.sch_rules
    ]
    return ms.space_generator.PostOrderApply(
        sch_rules=rules, postprocs=list(space.postprocs), mutator_probs=dict(space.mutator_probs)
    )


def _prepare_logging() -> None:
    """Warnings only on the console (full logs go to work_dir/logs). MetaSchedule rebuilds a
    logging config from its logger's handlers by name on every run; a handler without a name
    (pytest's log capture) fails the next tuning in the process, so those are dropped."""
    logger = logging.getLogger(_LOGGER)
    logger.setLevel(logging.WARNING)
    for handler in [h for h in logger.handlers if h.get_name() is None]:
        logger.removeHandler(handler)


def _cost_model(name: str) -> str:
    """xgb needs xgboost; without it, the random model still tunes (with a weaker search)."""
    if name == "xgb":
        try:
            import xgboost  # noqa: F401
        except ImportError:
            logging.getLogger(__name__).warning("xgboost is not installed; tuning with the random cost model")
            return "random"
    return name


def _search(trials: int) -> ms.search_strategy.EvolutionarySearch:
    """Evolutionary search with a population sized to the budget: MetaSchedule's 512 from
    64 trials up, smaller for small budgets, where searching would dwarf measuring."""
    population = max(32, min(512, 8 * trials))
    return ms.search_strategy.EvolutionarySearch(population_size=population, init_min_unmeasured=min(50, population))


@derived_object
class _Progress(ms.measure_callback.PyMeasureCallback):
    """Reports progress in trials measured, the unit of the budget the user set: each trial
    counts when its measurement ends, so the rate since the first one is the rate of the work
    left (a batch's search and build, and the warm-up before the first, only change the
    message). A candidate whose build failed counts once its batch is done. It lets the caller
    stop tuning between batches. What is shown never moves back."""

    def __init__(self, done: int, total: int, on_progress: OnProgress | None, check_cancelled):
        self.done, self.total = done, total
        self.measured = done  # trials whose measurement ended, counted one by one
        self.shown = float(done)
        self.on_progress, self.check_cancelled = on_progress, check_cancelled
        self.stopped: BaseException | None = None
        self.report(done, "searching the schedule space")

    def report(self, at: float, what: str) -> None:
        self.shown = max(self.shown, min(at, self.total))
        if self.on_progress is not None:
            self._stopping_on(self.on_progress, self.shown, self.total, what)

    def _stopping_on(self, callback, *args) -> None:
        """Call one of the caller's callbacks: what it raises stops tuning, kept in `stopped`
        (TVM wraps what a callback raises; tune() re-raises it as it was)."""
        try:
            callback(*args)
        except BaseException as e:
            self.stopped = e
            raise

    def phase(self, count: int, what: str) -> None:
        """A batch of `count` candidates reached a phase (building, measuring)."""
        self.report(self.measured, f"{what} {count} candidate schedules")

    def trial_measured(self) -> None:
        self.measured += 1
        if self.measured <= self.total:
            self.report(self.measured, f"{self.measured} of {self.total} trials measured")
        else:  # MetaSchedule measures its last batch whole
            self.report(
                self.measured, f"{self.measured} trials measured (budget {self.total}; the last batch ran over)"
            )

    def builder(self, inner: ms.builder.Builder) -> ms.builder.Builder:
        return _PhaseBuilder(inner, self)

    def runner(self, inner: ms.runner.Runner) -> ms.runner.Runner:
        return _PhaseRunner(inner, self)

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results) -> None:
        self.done += len(measure_candidates)
        while self.measured < self.done:  # candidates whose build failed never reached the runner
            self.trial_measured()
        if self.check_cancelled is not None:
            self._stopping_on(self.check_cancelled)


class _Phase:
    """MetaSchedule's builder or runner, wrapped to tell the progress when a batch of
    candidates reaches it before handing the batch on."""

    what: str

    def __init__(self, inner, progress: _Progress):
        self.inner, self.progress = inner, progress

    def reached(self, batch: list) -> list:
        self.progress.phase(len(batch), self.what)
        return batch


@derived_object
class _PhaseBuilder(ms.builder.PyBuilder, _Phase):
    what = "building"

    def build(self, build_inputs):
        return self.inner.build(self.reached(build_inputs))


@derived_object
class _PhaseRunner(ms.runner.PyRunner, _Phase):
    """Hands the runner one candidate at a time (a local runner measures them one after
    another anyway; a remote one returns at once), so each counts as its measurement ends."""

    what = "measuring"

    def run(self, runner_inputs):
        futures = []
        for one in self.reached(runner_inputs):
            future = _Counted(self.inner.run([one])[0], self.progress)
            future.done()  # a local runner's measurement has ended already
            futures.append(future)
        return futures


@derived_object
class _Counted(ms.runner.PyRunnerFuture):
    """A runner's future that counts its trial as measured once, when it is first seen done."""

    def __init__(self, inner, progress: _Progress):
        super().__init__()
        self.inner, self.progress, self.counted = inner, progress, False

    def done(self) -> bool:
        finished = bool(self.inner.done())
        if finished and not self.counted:
            self.counted = True
            self.progress.trial_measured()
        return finished

    def result(self):
        result = self.inner.result()
        self.done()
        return result
