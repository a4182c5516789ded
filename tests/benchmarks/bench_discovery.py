"""The discovery loop on this machine: can the proxy task tell operators apart, how fast does
the Fisher Potential screen run, and what does a timed run of the whole loop find.

Figure 1 (spread): test accuracy (core.train.seeds: trained again with --seeds seeds, those after
the task's seed, tested on the test split) of the original network (its run-to-run noise, and
the test set's own sampling noise) against known designs with the same seeds, each paired with
the original seed by seed (95% interval, judged against a 1-point margin: a 1x1 convolution,
which sees no neighbouring pixel, depthwise-separable and grouped), and 20 random candidates (the
Canvas sampler on conv2d, one seed each), each in every convolution it fits, all on the default
proxy task (the Fashion-MNIST subset, ResNet-18 width 16 at 24 px, 10 epochs) or the one --dataset,
--resolution, --limit and --epochs name. The task ranks operators only if the candidates'
spread is clearly larger than the baseline's noise, ranks the known designs as the literature
does (grouped about as accurate as a convolution, depthwise-separable a little below), and
tells a convolution from the 1x1 network only if that falls clearly outside a 1-point margin.
Figure 2 (screening): candidates per minute through the Fisher Potential screen (the data,
minibatch and original's scores computed once per process; each candidate's operator layers
built into a network that shares the original's other layers, one forward and backward
pass), in one process of --threads threads, or with --screen-workers N in N processes of one
thread each sharing the candidates, as the loop's local workers run the screen. Published:
NAS-PTE screens 1000 in under 5 minutes (200/min); the issue's goal is 1000 in under a minute.
Figure 2b (minibatch): how often the verdict changes with the minibatch's size (16 to 256
examples) against how often it changes with the seed, on the first --screen candidates.
Figure 3 (loop): `tessera discover` for --minutes on the default task with 2 workers (the
search's seed --loop-seed, so that a second run is a second draw, not the same one), then
from its store: the baseline's accuracy and tuned latency, candidates per stage, every
candidate within 1 point of the baseline's accuracy with its tuned end-to-end speedup (and
the timing's doubt: in the loop the other worker trains while it is timed), and
which known designs (by structure, see `design`) were among the survivors, and whether the
trained candidates' accuracy rises from the first third of the run to the last; then the best
survivor beside its references as the loop reports them (core.search.references: test accuracy
over seeds, the paired difference with its interval, FLOPs, tuned latency timed alone at the
loop's deployment size, speedup over the original and over the original narrowed to its FLOPs)
and the headline. Published: Canvas 1.5x at about 1% accuracy loss, Syno 2.06x on CPU within 1%.
Figure 4 (deploy, with --deploy): latency at the size users deploy (ResNet-18 at its standard
width, 224 px, batch 1) of the best survivor of the loop (or, with the loop skipped, of the
newest run in the --store of a loop run before; or --operator: a file or a bundled example,
default shift_conv), the original, the original narrowed to the survivor's FLOPs at
that size and depthwise-separable, every network tuned by MetaSchedule alone (no transfer) with
--deploy-trials trials per kernel (default 8, 32 and 128), in --tuning-runs independent runs
(each from empty tuning databases), each network timed against the original in alternating
rounds: a table per budget and run, so the dependence on tuning shows, then the one table the
README shows: accuracy from the loop's store (or, with --operator, trained here over --seeds
seeds on the proxy task), FLOPs, latency and speedups at the largest budget (medians over runs).
A run at 128 trials takes hours here: with --deploy-dir DIR the runs are kept there and the
same command resumes a stopped one at the network it stopped in (tests/benchmarks/kept_runs.py).

Sections run only when named with --section (hours each; tests/benchmarks/strategy_comparison.py
and fisher_prediction.py say what they do): `strategies`, MCTS against random sampling in Syno's
space and Canvas's sampler, the discovery loop for --minutes per strategy and seed (--strategies,
--strategy-seeds), a table per run and each strategy's mean; `exploration`, MCTS's exploration
constants on a surrogate reward (seconds); `fisher`, Fisher Potential against the trained
accuracy of --fisher candidates (Spearman's rho, a bootstrap interval, what each threshold screens
out and which of the best it loses); `power`, whether the task can say "equal"
(tests/benchmarks/discovery_power.py: an equal operator and the 1x1 network against the original
over --power-seeds seeds, and how often the default seed rule shows each within the margin);
`early-stop`, the early stop's false-stop rate on operators known to learn
(tests/benchmarks/discovery_early_stop.py, --early-stop-seeds seeds).
Their stores go in --results DIR (default a temporary folder): give one to resume or add seeds
and candidates later.

Every figure replaces the backbone's strided convolutions too (--replace, default
standard,pointwise,strided: the stride-2 3x3 and 1x1 convolutions that a stride-1-only search
keeps would cap the speedup); `--replace standard,pointwise` gives the figures as before.

    python -m tests.benchmarks.bench_discovery [--minutes 60] [--loop-seed 0] [--candidates 20] [--screen 300]
        [--threads 2] [--screen-workers 1] [--skip spread,screening,minibatch,loop] [--store PATH]
        [--dataset NAME|PATH] [--resolution PX] [--limit N] [--fisher-batch N] [--replace KINDS]
        [--seeds 3] [--epochs 10]
        [--deploy [--operator FILE|NAME] [--deploy-trials 8,32,128] [--tuning-runs 2]
         [--deploy-resolution 224] [--deploy-width N] [--deploy-dir DIR]]
        [--section strategies,exploration,fisher] [--strategies mcts,random,canvas] [--strategy-seeds 3]
        [--fisher 100] [--fisher-strategy random] [--power-seeds 10] [--power-workers 2] [--results DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

import networkx as nx
import torch

from app.cli import main as tessera
from app.cli.inputs import template_path
from core.analysis.fisher import FisherError
from core.data.datasets import load_dataset
from core.data.specs import REPLACE_KINDS, replace_kinds
from core.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.ir.serialize import content_hash, graph_from_document, load_operator
from core.networks.end_to_end import tuned_end_to_end
from core.networks.results import EndToEnd
from core.networks.settings import USERS_RESOLUTION, DeploySettings
from core.search import references
from core.search.base import Budget
from core.search.canvas_sampler import CanvasSampler
from core.search.report import headline, network_line
from core.search.settings import DiscoveryConfig
from core.search.stages import Phase, stage_counts
from core.search.summary import Best, Network, TestReport, summarize, test_decision
from core.store import Store
from core.store.searches import candidates, row_of, runs
from core.train import paired
from core.train.errors import EvaluationError
from core.train.flops import flops_match
from core.train.paired import mean_std, paired_difference, report_seeds
from core.train.results import HeldOutResult
from core.train.screening import FisherScreen, load_split
from core.train.seeds import train_over_seeds
from core.train.settings import EvalSettings, TrainConfig
from tests.benchmarks import discovery_early_stop, discovery_power, fisher_prediction, strategy_comparison
from tests.benchmarks.kept_runs import KeptRun
from tests.support import EXAMPLES

#: the figures this benchmark prints; those OPT_IN run only when --section names them
SECTIONS = ("screening", "minibatch", "spread", "loop", "exploration", "strategies", "fisher", "power", "early-stop")
OPT_IN = ("exploration", "strategies", "fisher", "power", "early-stop")
PAPER_PER_MINUTE = 1000 / 5  # NAS-PTE
GOAL_PER_MINUTE = 1000
LOOP_NAME = "bench_discovery"  # the run the loop section starts, in its store


def random_operators(seed: int = 0):
    """Distinct operators from the Canvas sampler on conv2d, forever."""
    sampler = CanvasSampler(load_operator(EXAMPLES / "conv2d.json"), Budget(flops=1.0, max_primitives=8), seed=seed)
    while True:
        batch = sampler.ask(8)
        if not batch:
            return
        yield from (c.graph for c in batch)


def known_designs() -> dict[str, OperatorGraph]:
    """A 1x1 convolution as MCTS writes it (share, reduce: no spatial window) and two bundled
    designs known to keep a convolution's accuracy."""
    return {
        "1x1 (share, reduce)": discovery_power.pointwise(),
        "depthwise_separable": load_operator(EXAMPLES / "depthwise_separable.json"),
        "grouped_conv": load_operator(EXAMPLES / "grouped_conv.json"),
    }


def spread(settings: EvalSettings, count: int, seeds: int = 3, epochs: int = TrainConfig.epochs) -> None:
    """Test accuracy over `seeds` seeds (core.train.seeds) of the original network and of each
    known design, each design paired with the original seed by seed; then `count` random
    candidates, one seed each."""
    config = TrainConfig(epochs=epochs)
    split = load_split(settings)
    chosen = report_seeds(settings.seed, seeds)
    print(
        f"Proxy task: {settings.dataset_label}, {settings.spec.label}, {len(split.train)} training / "
        f"{len(split.val)} validation / {len(split.test)} test images, {config.epochs} epochs, seeds "
        f"{', '.join(map(str, chosen))}, {torch.get_num_threads()} thread(s); test accuracy"
    )
    base = train_over_seeds(None, settings, config, chosen)
    accuracies = [r.accuracy for r in base]
    if None in accuracies:
        print(f"  original: diverged at a seed ({', '.join(r.outcome for r in base)})")
        return
    mean, noise = statistics.mean(accuracies), statistics.stdev(accuracies)
    sampling = (mean * (1 - mean) / len(split.test)) ** 0.5
    print(
        f"  original: {', '.join(f'{a:.3f}' for a in accuracies)} ({mean_std(accuracies)}; the test set's "
        f"own sampling std {sampling:.4f}); {statistics.mean(r.seconds for r in base) / epochs:.1f} s per epoch"
    )
    for name, graph in known_designs().items():
        try:
            runs = train_over_seeds(graph, settings, config, chosen)
        except EvaluationError as e:
            print(f"  {name}: {e}")
            continue
        found = [r.accuracy for r in runs]
        if None in found:
            print(f"  {name}: diverged at a seed ({', '.join(r.outcome for r in runs)})")
            continue
        paired = paired_difference(found, accuracies)
        print(
            f"  {name}: {', '.join(f'{a:.3f}' for a in found)} ({mean_std(found)}), "
            f"{100 * paired.mean:+.1f} points paired; {paired.verdict(0.01)}; "
            f"{statistics.mean(r.seconds for r in runs) / epochs:.1f} s per epoch"
        )
    if count < 2:
        return
    found = []
    learned: list[float] = []
    outcomes: dict[str, int] = {}
    for graph in random_operators():
        if len(found) >= count:
            break
        try:
            [run] = train_over_seeds(graph, settings, config, chosen[:1])
        except EvaluationError:
            outcomes["fits no layer"] = outcomes.get("fits no layer", 0) + 1
            continue
        outcomes[run.outcome] = outcomes.get(run.outcome, 0) + 1
        if run.accuracy is not None:
            found.append(run.accuracy)
            learned += [run.accuracy] if run.outcome == "trained" else []
    spread_std = statistics.stdev(found)
    close = sum(abs(a - mean) <= 2 * noise for a in found)
    print(
        f"  {len(found)} random candidates (seed {chosen[0]}): min {min(found):.3f}, median "
        f"{statistics.median(found):.3f}, max {max(found):.3f}, std {spread_std:.4f} "
        f"({spread_std / max(noise, 1e-9):.1f}x the original's noise)"
    )
    print(f"  outcomes: {', '.join(f'{n} {o}' for o, n in sorted(outcomes.items()))}")
    low, _, high = statistics.quantiles(learned, n=4)
    print(
        f"  of the {len(learned)} that learned: interquartile range {low:.3f}-{high:.3f} "
        f"({(high - low) / max(noise, 1e-9):.1f}x the original's std)"
    )
    print(f"  {close} of {len(found)} within 2 std of the original's mean {mean:.3f}")


def screen_share(settings: EvalSettings, count: int, threads: int, barrier=None, taken=None) -> tuple:
    """The first `count` candidates of the stream through one screen, or, with `taken` (a counter
    shared by the workers), those this worker takes next one at a time, as the loop's workers
    take jobs from the queue: (verdict counts, each candidate's seconds, seconds for them all,
    set-up seconds). The stream is drawn and the screen set up before the clock starts (and, in
    a worker, before `barrier`, so that every worker's clock starts together)."""
    torch.set_num_threads(threads)
    start = time.perf_counter()
    screen = FisherScreen(settings)
    setup = time.perf_counter() - start
    graphs = list(itertools.islice(random_operators(seed=1), count))
    if barrier is not None:
        barrier.wait()
    verdicts = dict.fromkeys(VERDICTS, 0)
    times = []
    start = time.perf_counter()
    next_index = itertools.count().__next__ if taken is None else functools.partial(_take, taken)
    while (i := next_index()) < count:
        t = time.perf_counter()
        verdicts[verdict(screen, graphs[i])] += 1
        times.append(time.perf_counter() - t)
    return verdicts, times, time.perf_counter() - start, setup


def _take(taken) -> int:
    with taken.get_lock():
        taken.value += 1
        return taken.value - 1


VERDICTS = ("passed", "rejected", "no score", "fits no layer")


def verdict(screen: FisherScreen, graph: OperatorGraph) -> str:
    """What the screen says of the operator in every convolution it fits: one of VERDICTS."""
    try:
        net, report = screen.candidate(graph, shared=True)
        return "passed" if screen.score(net, report)["fisher_passes"] else "rejected"
    except EvaluationError:
        return "fits no layer"
    except FisherError:
        return "no score"


def minibatch(settings: EvalSettings, count: int, sizes=(16, 32, 64, 128, 256)) -> None:
    """How much the verdicts depend on the minibatch's size, against how much they depend on the
    seed (the original's and the operator's initial weights, and which examples are drawn): each
    size's verdicts on the first `count` random candidates with seeds 0 and 1, compared with the
    largest minibatch's at seed 0, and seed 0's with seed 1's."""
    graphs = list(itertools.islice(random_operators(seed=1), count))
    found: dict[tuple[int, int], list[str]] = {}
    seconds: dict[tuple[int, int], float] = {}
    for size in sizes:
        for seed in (0, 1):
            screen = FisherScreen(dataclasses.replace(settings, fisher_batch=size, seed=seed))
            start = time.perf_counter()
            found[size, seed] = [verdict(screen, g) for g in graphs]
            seconds[size, seed] = time.perf_counter() - start
    reference = found[sizes[-1], 0]

    def agree(a: list[str], b: list[str]) -> int:
        return sum(x == y for x, y in zip(a, b))

    print(f"Fisher verdicts by minibatch size, {count} random candidates, {torch.get_num_threads()} thread(s):")
    for size in sizes:
        print(
            f"  minibatch {size:>3}: {count / seconds[size, 0] * 60:.0f}/min; same verdict as minibatch "
            f"{sizes[-1]} (seed 0) for {agree(found[size, 0], reference)} of {count}; seed 0 and seed 1 agree "
            f"on {agree(found[size, 0], found[size, 1])}"
        )


def _screen_worker(settings: EvalSettings, count: int, barrier, taken, results) -> None:
    results.put(screen_share(settings, count, 1, barrier, taken))


def screening(settings: EvalSettings, count: int, workers: int) -> None:
    """One process with torch's threads as set (workers 1), or `workers` processes of one
    thread each sharing the candidates, as the discovery loop's local workers screen them."""
    if workers == 1:
        shares = [screen_share(settings, count, torch.get_num_threads())]
        how = f"1 process, {torch.get_num_threads()} thread(s)"
    else:
        context = multiprocessing.get_context("spawn")
        barrier, taken, results = context.Barrier(workers), context.Value("i", 0), context.Queue()
        processes = [
            context.Process(target=_screen_worker, args=(settings, count, barrier, taken, results))
            for _ in range(workers)
        ]
        for process in processes:
            process.start()
        shares = [results.get() for _ in processes]
        for process in processes:
            process.join()
        how = f"{workers} worker processes of 1 thread each, each taking the next candidate"
    verdicts = {v: sum(share[0][v] for share in shares) for v in shares[0][0]}
    times = [t for share in shares for t in share[1]]
    total = max(share[2] for share in shares)  # the last worker to finish
    per_minute = count / total * 60
    print(
        f"Fisher screening, {settings.spec.label} at {settings.resolution}px, minibatch {settings.fisher_batch}, "
        f"{how}, set-up {max(share[3] for share in shares):.1f} s once:"
    )
    print(
        f"  {count} random candidates in {total:.1f} s: {per_minute:.0f} per minute "
        f"(median {1e3 * statistics.median(times):.0f} ms, max {1e3 * max(times):.0f} ms each); "
        f"1000 take {1000 / per_minute:.1f} min"
    )
    print(
        f"  ratio to NAS-PTE's 200/min: {per_minute / PAPER_PER_MINUTE:.2f}x; "
        f"to the goal of 1000/min: {per_minute / GOAL_PER_MINUTE:.2f}x"
    )
    print("  " + ", ".join(f"{n} {v}" for v, n in verdicts.items()))


#: primitives that never mix neighbouring pixels: an operator made only of them is a 1x1 layer
POINTWISE = {"share", "reduce", "fc", "elementwise", "broadcast"}


def design(graph: OperatorGraph) -> str:
    """Which known design an operator resembles, by its primitives (a heuristic for the report):
    a product of a weighted function of the input with its unfolded window (involution-like),
    a per-channel fc and a plain one (depthwise-separable), other groups (grouped), pooling
    over space (spatial bottleneck), nothing that looks past one pixel (pointwise), pixels
    moved by rolls and otherwise pointwise (Wu et al.'s shift, the bundled shift_conv), a
    window on one axis only (Kx1 / 1xK, as in asymmetric factorisations)."""
    prims = {n: graph.prim(n) for n in graph.primitive_nodes()}

    def weighted(nodes: set[str]) -> bool:
        return any(n in prims and prims[n].op in ("fc", "share") for n in nodes)

    for n, p in prims.items():
        if p.op == "broadcast" and p.params.get("fn") == "mul":
            branches = [nx.ancestors(graph.g, u) | {u} for u in graph.g.predecessors(n)]
            unfolded = [b for b in branches if any(m in prims and prims[m].op == "unfold" for m in b)]
            if len(branches) == 2 and sum(map(weighted, branches)) == 1 and any(not weighted(b) for b in unfolded):
                return "involution-like"
    fcs = [p.params for p in prims.values() if p.op == "fc"]
    groups = [str(f.get("groups", "1")) for f in fcs]
    if any(g != "1" and g == str(f.get("out")) for g, f in zip(groups, fcs)) and "1" in groups:
        return "depthwise-separable"
    if any(g != "1" for g in groups) or any(p.op in ("split", "group") for p in prims.values()):
        return "grouped"
    if any(p.op == "fold" for p in prims.values()):
        return "spatial bottleneck"
    ops = {p.op for p in prims.values()}
    if ops <= POINTWISE:
        return "pointwise (1x1)"
    if ops <= POINTWISE | {"shift"}:
        return "shift + pointwise (ShiftNet-like)"
    if ops <= POINTWISE | {"shift", "unfold"} and "unfold" in ops:
        windows = sum(p.op == "unfold" for p in prims.values())
        return "window on one axis (Kx1-like)" if windows == 1 else "convolution-like"
    return "other"


def loop(minutes: float, store_path: Path, replace: tuple[str, ...], seed: int = 0) -> Survivor | None:
    command = ["discover", "--minutes", str(minutes), "--replace", ",".join(replace), "--seed", str(seed)]
    print(f"Discovery loop: tessera {' '.join(command)}, 2 workers, default task (store {store_path})")
    start = time.perf_counter()
    code = tessera([*command, "--store", str(store_path), "--name", LOOP_NAME])
    print(f"  ran {time.perf_counter() - start:.0f} s, exit code {code}")
    return report(store_path, LOOP_NAME)


@dataclasses.dataclass(frozen=True)
class Survivor:
    """The loop's best survivor as the deploy section takes it: its operator, the test reports of
    it and its references by kind, the narrowed reference's multiplier where it was trained, and
    the kinds of convolution it replaced there (the deploy section replaces the same)."""

    graph: OperatorGraph
    tests: dict[str, Network]  # the survivor, the original and the references as the loop reported them
    trained_scale: float | None
    replace: tuple[str, ...]


def report(store_path: Path, name: str | None = None) -> Survivor | None:
    """The loop's figures, from its store: of the run called `name`, or of the newest (a loop
    run earlier, say by `tessera discover`); its best survivor, if any."""
    if not store_path.is_file():
        raise SystemExit(f"{store_path}: no such store (give the --store of a discovery run)")
    with Store(store_path) as store:
        run = next((r for r in reversed(runs(store)) if name in (None, r.name)), None)
        if run is None:
            raise SystemExit(f"{store_path} holds no discovery run" + (f" called {name}" if name else ""))
        if name is None:
            print(f"Discovery run {run.name!r} in {store_path}")
        try:
            cfg = DiscoveryConfig.stored(run.config)
        except (TesseraError, TypeError) as exc:
            raise SystemExit(
                f"{store_path}: the run {run.name!r} has settings this version cannot read: {exc}"
            ) from None
        rows = candidates(store, run)
        counts = stage_counts(rows)
        [baseline] = store.db.query("SELECT MIN(e2e_baseline_ms) AS ms FROM scores WHERE e2e_tuned = 1")
        latency = f"{baseline['ms']:.2f} ms" if baseline["ms"] else "not measured (no candidate reached tuning)"
        accuracy = "not measured" if run.baseline_accuracy is None else f"{run.baseline_accuracy:.3f}"
        print(f"  original: accuracy {accuracy}, tuned latency {latency}")
        print("  stages: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
        trained = [r["accuracy"] for r in rows if r["accuracy"] is not None]  # in proposal order
        thirds = [trained[i * len(trained) // 3 : (i + 1) * len(trained) // 3] for i in range(3)]
        if all(thirds):
            print(
                "  does the search learn? proxy accuracy of the trained candidates by thirds of the run: "
                + "; ".join(f"median {statistics.median(t):.3f}, best {max(t):.3f}" for t in thirds)
            )
        base, margin = run.baseline_accuracy or 0.0, cfg.margin  # the margin the loop ran with
        within = [r for r in rows if r["accuracy"] is not None and r["accuracy"] >= base - margin]
        tuned = sorted((r for r in within if r["e2e_speedup"]), key=lambda r: -r["e2e_speedup"])
        if not tuned:
            print(f"  {len(within)} within {margin:g} of the original; none with a tuned end-to-end speedup yet")
        if run.baseline_test:
            print(f"  original on the test split: {mean_std([a for a in run.baseline_test if a is not None])}")
        for r in tuned:  # a timing taken while the other worker trained says so in its detail
            among = f"; selected among {r['selected_from']} proposed" if r["selected_from"] else ""
            print(
                f"  within {margin:g}: {r['operator_name']} accuracy {r['accuracy']:.3f} (original {base:.3f}{among}), "
                f"tuned end-to-end speedup {r['e2e_speedup']:.2f}x"
                f"{'; ' + r['detail'] if r['detail'] else ''}"
            )
            if r["test_accuracy"] is not None:
                low, high = r["test_difference_low"], r["test_difference_high"]
                print(
                    f"    test split: {r['test_accuracy']:.3f}, {100 * r['test_difference']:+.1f} points against the "
                    f"original seed by seed; {paired.verdict(None if low is None else (low, high), margin)}"
                )
        if tuned:
            print("  published: Canvas 1.5x, Syno 2.06x (both tuned against tuned)")
        survivors = [graph_from_document(store.operator(r["operator_id"])["document"]) for r in within]
        kinds: dict[str, int] = {}
        for graph in survivors:
            kinds[design(graph)] = kinds.get(design(graph), 0) + 1
        print("  survivors by design: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"))
        best = best_beside_references(store, run, cfg)
        if best is None:
            return None
        assert best.survivor.operator_id is not None  # a row of the run
        graph = graph_from_document(store.operator(best.survivor.operator_id)["document"])
        graph.set_declaration(name=best.survivor.name)
        tests = {n.kind: n for n in (best.survivor, *best.references)}
        row = row_of(store, run, best.survivor.operator_id)
        kinds = DeploySettings.from_payload(cfg.deploy).replace
        return Survivor(graph, tests, None if row is None else references.scales(row)[0], kinds)


def best_beside_references(store: Store, run, cfg: DiscoveryConfig) -> Best | None:
    """The loop's best survivor beside its references, as the loop reports them
    (core.search.report), or None without one."""
    best = summarize(store, run, cfg, Phase.FINISHED).best
    if best is None:
        print("  no best survivor: none within the margin has a tuned speedup")
        return None
    deploy = DeploySettings.from_payload(cfg.deploy)
    print(
        f"  the best beside its references (test accuracy over seeds {', '.join(map(str, cfg.report_seeds))}; "
        f"FLOPs and tuned latency at {deploy.label}, {deploy.trials} trials per kernel):"
    )
    for network in (best.survivor, *best.references):
        print(f"    {network_line(network, best)}")
    print(f"  headline: {headline(best, cfg.margin)}")
    return best


def held_out(
    operator: OperatorGraph, settings: EvalSettings, seeds: int, epochs: int
) -> tuple[dict[str, Network], float]:
    """Test accuracy over `seeds` seeds (core.train.seeds) of the original, the operator, the
    original narrowed to its FLOPs at the proxy size and depthwise-separable, each paired with
    the original (as the loop's references are), by kind; and the narrowed one's multiplier."""
    config, chosen = TrainConfig(epochs=epochs), report_seeds(settings.seed, seeds)
    data = load_dataset(settings.dataset, settings.resolution)
    print(
        f"Test accuracy: {settings.spec.label} on {settings.dataset_label}, {epochs} epochs, "
        f"seeds {', '.join(map(str, chosen))}, each network paired with the original seed by seed"
    )
    original = [r.accuracy for r in train_over_seeds(None, settings, config, chosen, data=data)]
    tested = [a for a in original if a is not None]
    found = {"original": Network("original", "the original", "tested", accuracies=tuple(tested))}
    scale = flops_match(settings.spec, data.num_classes, operator).scale
    for kind, stand_in, proxy in (
        ("survivor", operator, settings),
        (references.NARROWED, None, dataclasses.replace(settings, scale=scale)),
        (references.SEPARABLE, load_operator(EXAMPLES / "depthwise_separable.json"), settings),
    ):
        runs = train_over_seeds(stand_in, proxy, config, chosen, data=data)
        score = HeldOutResult.of(runs, original, paired.MARGIN, epochs, proxy.dataset_label, proxy.spec.label).score
        verdict = test_decision(dataclasses.asdict(score), paired.MARGIN, seeds)
        test = (
            None
            if verdict is None
            else TestReport(score.test_accuracy, score.test_accuracy_std, score.test_difference, verdict)
        )
        found[kind] = Network(kind, kind, "tested", test=test)
    return found, scale


def deploy(
    operator: OperatorGraph,
    tests: dict[str, Network],
    trained_scale: float | None,
    base: DeploySettings,
    trials: list[int],
    runs: int,
    folder: Path | None = None,
) -> None:
    """The operator, the original narrowed to its FLOPs at the deployment size and
    depthwise-separable, each tuned and timed against the original (core.networks.end_to_end)
    with MetaSchedule alone at each budget of `trials`, in `runs` runs from empty tuning
    databases; then the table of `tests` (test reports by kind) beside FLOPs, latency and
    speedups at the largest budget (medians over the runs). Runs are kept in `folder` (default
    a temporary one), where a stopped run resumes (tests.benchmarks.kept_runs)."""
    separable = load_operator(EXAMPLES / "depthwise_separable.json")
    match = flops_match(base.spec, base.num_classes, operator)
    networks = {
        "survivor": (operator, base, match.flops),
        references.NARROWED: (None, dataclasses.replace(base, scale=match.scale), match.matched),
        references.SEPARABLE: (separable, base, flops_match(base.spec, base.num_classes, separable).flops),
    }
    print(
        f"Deployed size: {base.label}, batch 1, {torch.get_num_threads()} thread(s), MetaSchedule only "
        f"(no transfer), {runs} run(s) per budget from empty tuning databases; {operator.name}: "
        f"{match.flops / 1e6:.1f} MFLOPs, the original {match.original / 1e6:.1f}, narrowed x{match.scale:.3g} "
        f"{match.matched / 1e6:.1f} ({100 * (match.matched / match.flops - 1):+.1f}%)"
    )
    timed: dict[tuple[int, int, str], EndToEnd] = {}
    with contextlib.ExitStack() as stack:
        root = folder or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        kept_as = {"operator": content_hash(operator), "deploy": base.label, "threads": torch.get_num_threads()}
        for budget, run in itertools.product(trials, range(1, runs + 1)):
            kept = KeptRun(root / f"{budget}-trials-run-{run}", {**kept_as, "trials": budget})
            for kind, (stand_in, settings, _) in networks.items():
                found, took = kept.result(kind), f"kept in {kept.folder}"
                if found is None:
                    start = time.perf_counter()
                    kept.restore()
                    found = tuned_end_to_end(stand_in, dataclasses.replace(settings, trials=budget), (), kept.tuning)
                    kept.finish(kind, found)
                    took = f"{time.perf_counter() - start:.0f} s to tune and time"
                timed[budget, run, kind] = found
                kernels = len({k.kernel for k in found.kernels})
                doubt = "; ".join(filter(None, (found.timing_note, found.untuned_kernels and "kernels left untuned")))
                print(
                    f"  {budget} trials, run {run}, {kind}: TVM {found.latency_ms:.2f} ms against the original's "
                    f"{found.baseline_latency_ms:.2f} ms, {found.baseline_latency_ms / found.latency_ms:.2f}x "
                    f"(PyTorch eager {found.torch_latency_ms:.2f} ms and {found.torch_baseline_ms:.2f} ms; "
                    f"{kernels} kernels, {took})" + (f"; {doubt}" if doubt else "")
                )
            narrowed = timed[budget, run, references.NARROWED]
            ours = timed[budget, run, "survivor"]
            print(
                f"  {budget} trials, run {run}: {operator.name} {_speedup(ours) / _speedup(narrowed):.2f}x the "
                "narrowed original (the ratio of their speedups over the original)"
            )
    largest = max(trials)
    rows = {}
    for kind, (_, settings, flops) in networks.items():
        found = [timed[largest, run, kind] for run in range(1, runs + 1)]
        name = operator.name if kind == "survivor" else _reference_name(kind, base, trained_scale, settings)
        rows[kind] = dataclasses.replace(
            tests.get(kind) or Network(kind, name, "tuned"),
            name=name,
            stage="tuned",
            flops=flops,
            latency_ms=statistics.median(f.latency_ms for f in found),
            speedup=statistics.median(_speedup(f) for f in found),
            torch_ms=statistics.median(f.torch_latency_ms for f in found),
            timed_alone=True,
            note="",
        )
    original = dataclasses.replace(
        tests.get("original") or Network("original", "the original", "tuned"),
        stage="tuned",
        flops=match.original,
        latency_ms=statistics.median(t.baseline_latency_ms for (b, _, _), t in timed.items() if b == largest),
        speedup=1.0,
        torch_ms=statistics.median(t.torch_baseline_ms for (b, _, _), t in timed.items() if b == largest),
        timed_alone=True,
    )
    survivor = rows.pop("survivor")
    best = Best(survivor, 0.0, 1, (original, *rows.values()))
    print(f"At {base.label}, {largest} trials per kernel (medians over {runs} runs):")
    for network in (survivor, *best.references):
        print(f"  {network_line(network, best)}")
    print(f"  headline: {headline(best, paired.MARGIN)}")


def _speedup(run: EndToEnd) -> float:
    return run.baseline_latency_ms / run.latency_ms


def _reference_name(kind: str, base: DeploySettings, trained: float | None, settings: DeploySettings) -> str:
    if kind == references.NARROWED:
        return references.narrowed_name(base.backbone, trained, settings.scale)
    return kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--loop-seed", type=int, default=0, help="loop: the search's seed (tessera discover --seed)")
    parser.add_argument("--candidates", type=int, default=20, help="random candidates trained for the spread")
    parser.add_argument("--seeds", type=int, default=3, help="spread: seeds of the original and each known design")
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs, help="spread, fisher: training epochs")
    parser.add_argument("--screen", type=int, default=300, help="candidates through the Fisher screen")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--screen-workers",
        type=int,
        default=1,
        help="screen in this many processes of 1 thread each (the loop's local workers) instead of one of --threads",
    )
    parser.add_argument("--skip", default="", help="comma-separated: spread, screening, minibatch, loop")
    parser.add_argument(
        "--section",
        default="",
        help=f"comma-separated: run only these, of {', '.join(SECTIONS)} (strategies, exploration and fisher "
        "run only when named)",
    )
    parser.add_argument("--strategies", default=",".join(strategy_comparison.STRATEGIES), help="strategies section")
    parser.add_argument("--strategy-seeds", type=int, default=3, help="strategies: seeds 0..N-1 per strategy")
    parser.add_argument("--fisher", type=int, default=100, help="fisher: candidates trained")
    parser.add_argument("--fisher-strategy", default="random", help="fisher: the strategy drawing them")
    parser.add_argument("--power-seeds", type=int, default=10, help="power: seeds each network trains with")
    parser.add_argument("--power-workers", type=int, default=2, help="power: trainings at once, one thread each")
    parser.add_argument("--early-stop-seeds", type=int, default=3, help="early-stop: seeds 0..N-1 per network")
    parser.add_argument(
        "--results", type=Path, default=None, help="strategies, fisher: folder of their stores (default temporary)"
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help="the loop's store (default a new temporary file); with the loop skipped and --deploy, the store of a "
        "loop run before, whose newest run's best survivor the deploy section takes",
    )
    task = EvalSettings()
    parser.add_argument("--dataset", default=task.dataset, help="spread and screening: the proxy task's dataset")
    parser.add_argument("--resolution", type=int, default=task.resolution, help="spread and screening: its pixels")
    parser.add_argument("--limit", type=int, default=None, help="spread and screening: keep N examples (default all)")
    parser.add_argument(
        "--fisher-batch", type=int, default=task.fisher_batch, help="screening: examples in the Fisher minibatch"
    )
    parser.add_argument(
        "--replace",
        default=",".join(REPLACE_KINDS),
        help="the convolutions an operator stands in for (default %(default)s)",
    )
    deployed = parser.add_argument_group("deploy: latency at the size users deploy (hours at the default budgets)")
    deployed.add_argument("--deploy", action="store_true", help="run the deploy section (after the loop, if it runs)")
    deployed.add_argument(
        "--operator",
        default=None,
        help="the survivor: an operator file or a bundled example (default: the best of the loop, or of the "
        "--store of a loop run before, else shift_conv); "
        "its accuracy and its references' are then trained here over --seeds seeds for --epochs epochs",
    )
    deployed.add_argument("--deploy-trials", default="8,32,128", help="trials per kernel, comma-separated")
    deployed.add_argument("--tuning-runs", type=int, default=2, help="independent tuning runs per budget")
    deployed.add_argument("--deploy-resolution", type=int, default=USERS_RESOLUTION)
    deployed.add_argument("--deploy-width", type=int, default=None, help="default: the backbone's standard width")
    deployed.add_argument(
        "--deploy-dir",
        type=Path,
        default=None,
        help="keep each tuning run's databases and results here, so a stopped deploy section resumes at the "
        "network it stopped in (default a temporary folder)",
    )
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    if args.section:
        named = set(args.section.split(","))
        unknown = named - set(SECTIONS)
        if unknown:
            parser.error(f"unknown section(s) {', '.join(sorted(unknown))}; known: {', '.join(SECTIONS)}")
        skip = set(SECTIONS) - named
    else:
        skip |= set(OPT_IN)
    torch.set_num_threads(args.threads)
    settings = EvalSettings(
        dataset=args.dataset,
        resolution=args.resolution,
        limit=args.limit,
        fisher_batch=args.fisher_batch,
        replace=replace_kinds(args.replace),
    )
    if "screening" not in skip:
        screening(settings, args.screen, args.screen_workers)
    if "minibatch" not in skip:
        minibatch(settings, args.screen)
    if "spread" not in skip:
        spread(settings, args.candidates, args.seeds, args.epochs)
    survivor = None
    if "loop" not in skip:
        with tempfile.TemporaryDirectory() as tmp:
            store = args.store or Path(tmp) / "discovery.db"
            survivor = loop(args.minutes, store, settings.replace, args.loop_seed)
    elif args.deploy and args.store is not None and args.operator is None:
        survivor = report(args.store)  # a loop run before: its newest run's best survivor
    if args.deploy:
        if survivor is None or args.operator is not None:
            graph = load_operator(template_path(args.operator or "shift_conv"))
            tests, scale = held_out(graph, settings, args.seeds, args.epochs)
            survivor = Survivor(graph, tests, scale, settings.replace)
        elif survivor.replace != settings.replace:
            print(f"  replacing {', '.join(survivor.replace)} convolutions, as the loop run did (not --replace)")
        base = DeploySettings(
            settings.backbone,
            args.deploy_width,
            args.deploy_resolution,
            transfer=False,
            replace=survivor.replace,
        )
        trials = [int(t) for t in args.deploy_trials.split(",")]
        deploy(survivor.graph, survivor.tests, survivor.trained_scale, base, trials, args.tuning_runs, args.deploy_dir)
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results or Path(tmp)
        if "exploration" not in skip:
            strategy_comparison.surrogate()
        if "strategies" not in skip:
            task = ["--dataset", args.dataset, "--resolution", str(args.resolution), "--replace", args.replace]
            task += ["--fisher-batch", str(args.fisher_batch), "--epochs", str(args.epochs)]
            task += [] if args.limit is None else ["--limit", str(args.limit)]
            strategies = tuple(args.strategies.split(","))
            strategy_comparison.compare(strategies, args.strategy_seeds, args.minutes, results, task, design)
        if "power" not in skip:
            discovery_power.power(settings, args.power_seeds, args.epochs, args.power_workers, results)
        if "early-stop" not in skip:
            discovery_early_stop.early_stop(settings, args.early_stop_seeds, args.epochs, args.power_workers, results)
        if "fisher" not in skip:
            fisher_prediction.fisher_prediction(
                settings, args.fisher, results / "fisher.db", args.epochs, args.fisher_strategy
            )


if __name__ == "__main__":
    main()
