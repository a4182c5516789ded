"""`tessera evaluate`: the accuracy side of an operator in a backbone.

Without --fisher-only it queues a "train" job (Fisher Potential at initialisation, then
proxy training early-stopped against the best stored curve; validation accuracy), at the
proxy size (--train-width, --resolution); a "test" job (the network and the original trained
again with each seed, tested on the test split, paired, judged against --margin: seeds added a
few at a time until the interval decides, core.train.sequential, or --seeds N of them, judged by
the 95% interval, with the smallest difference that count could detect); and an "e2e" job: the
whole network with the operator against the original, both with tuned kernels (--trials per
kernel still untuned; schedules of kernels already tuned, or of the same class with transfer on,
are reused), at the deployment size
(--deploy-width, --deploy-resolution). --now also runs them here, in a worker process,
and prints one table of their results; otherwise `tessera worker` runs them.

FILE may be an assignment instead (operators per layer, core.data.assignment), which
`tessera assign` builds: the same jobs, each layer running its own operator; their scores
stay on the jobs (an assignment is no one operator).
"""

from __future__ import annotations

import time
from pathlib import Path

from core.data.assignment import Assignment, read_stand_in
from core.jobs.queue import CANCELLED, DONE, FAILED, JobQueue
from core.jobs.registry import job_result
from core.jobs.submit import Subject, submit
from core.jobs.supervisor import Supervisor
from core.networks.settings import DeploySettings
from core.store import Store
from core.train.paired import mean_std
from core.train.requests import AccuracyRequest
from core.train.results import E2EResult, FisherResult, HeldOutResult, TrainResult
from core.train.sequential import DEFAULT_RULE
from core.train.settings import EvalSettings, TrainConfig

from . import options
from .evaluate_model import add_model_options, cmd_evaluate_model
from .inputs import transfer_sources
from .reports import faster_text, table_lines

FINAL = (DONE, FAILED, CANCELLED)


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "evaluate",
        help="queue Fisher Potential, proxy training and end-to-end latency of an operator inside a backbone",
    )
    p.add_argument(
        "file", metavar="FILE", help="an operator, or an assignment of operators to layers (`tessera assign`)"
    )
    proxy_options(p, "default resnet18, or the assignment's", deployed=True)
    p.add_argument("--epochs", type=int, default=TrainConfig.epochs, help="proxy-training epochs (default %(default)s)")
    options.training(p)
    options.report(p, sequential=True)
    p.add_argument("--theta", type=float, default=0.5, help="early-stop theta in [0, 1] (default 0.5)")
    p.add_argument("--max-batches", type=int, default=None, metavar="N", help="batches per epoch at most")
    p.add_argument("--fisher-only", action="store_true", help="only score Fisher Potential (no training)")
    p.add_argument("--no-e2e", action="store_true", help="skip the end-to-end latency job")
    options.deployment(
        p, "MetaSchedule trials for each network kernel not tuned yet (default %(default)s; 0: reuse only)"
    )
    p.add_argument(
        "--no-transfer",
        action="store_true",
        help="tune kernels of the operator from scratch instead of reusing schedules of their kernel class",
    )
    options.transfer_sources(p)
    options.tuning_dir(
        p, "tuning databases folder (default ~/.cache/tessera/tuning); the networks' kernels are kept there"
    )
    add_model_options(p)
    p.add_argument("--now", action="store_true", help="run the jobs now in a worker and print the results")
    options.store(p)
    p.set_defaults(func=cmd_evaluate)


def proxy_options(p, backbone_help: str, deployed: bool = False) -> None:
    """The proxy network and data, which `evaluate` and `assign` score on alike."""
    options.proxy_task(p, backbone=None, backbone_help=backbone_help, deployed=deployed)
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="train and validate on a stratified sample of N examples (default: all; the test split stays whole)",
    )
    p.add_argument("--seed", type=int, default=0)
    options.fisher_batch(p)
    options.replace(p)


def eval_settings(args, backbone: str) -> EvalSettings:
    backbone = args.backbone or backbone
    return EvalSettings(
        dataset=args.dataset,
        backbone=backbone,
        width=options.train_width(args, backbone),
        resolution=args.resolution,
        seed=args.seed,
        limit=args.limit,
        fisher_batch=args.fisher_batch,
        replace=args.replace,
    )


def cmd_evaluate(args) -> int:
    if args.model:
        return cmd_evaluate_model(args)
    doc, stand_in = read_stand_in(args.file)
    subjects: tuple[Subject, ...] = ()
    assignments: tuple[Assignment, ...] = ()
    if isinstance(stand_in, Assignment):
        from core.data.swap_convs import conv_names  # torch: only for an assignment's layer names

        settings = eval_settings(args, stand_in.backbone)
        stand_in.check_backbone(settings.backbone)
        stand_in.check_layers(conv_names(settings.spec))
        subjects, assignments = (), (stand_in,)
    else:
        settings = eval_settings(args, "resnet18")
        name, key = stand_in.name or Path(args.file).stem, str(Path(args.file).resolve())
        subjects, assignments = (Subject(doc, name, input_key=key, parsed=stand_in),), ()
    deploy = DeploySettings(
        backbone=settings.backbone,
        width=args.deploy_width,
        resolution=args.deploy_resolution,
        trials=args.trials,
        transfer=not args.no_transfer,
        sources=tuple(transfer_sources(args.sources, not args.no_transfer, "drop --no-transfer")),
        seed=args.seed,
        replace=settings.replace,
    )
    request = AccuracyRequest(
        settings,
        epochs=args.epochs,
        theta=args.theta,
        max_batches=args.max_batches,
        device=args.train_device,
        amp=args.amp,
        seeds=args.seeds or 0,
        margin=args.margin,
        rule=DEFAULT_RULE if args.seeds is None else None,
        fisher_only=args.fisher_only,
        deploy=None if args.no_e2e else deploy,
        tuning_root=args.tuning_dir,
        subjects=subjects,
        assignments=assignments,
    )
    if args.now and not args.fisher_only:
        from core.train.device import training_device

        training_device(args.train_device, args.amp)  # --now trains on this machine: refuse a GPU it lacks
    with Store(args.store) as store:
        ids = submit(store, request).ids
        queue = JobQueue(store)
        for job_id in ids:
            print(
                f"queued {queue.get(job_id).describe()} on {settings.spec.label} at "
                f"{settings.dataset_label} in {store.path}"
            )
        if not args.now:
            print("run `tessera worker` to process them")
            return 0
        return _run_now(store, ids)


def _run_now(store: Store, ids: list[int]) -> int:
    """One worker process runs the jobs; progress lines as they change, then each result (a
    failure the worker's events already said is not said twice)."""
    queue = JobQueue(store)
    shown: dict[int, str] = {}
    said: set[str] = set()
    supervisor = Supervisor(store.path, workers=1)
    supervisor.start()
    try:
        while True:
            for line in supervisor.poll():
                said.add(line)
                print(line, flush=True)
            jobs = [queue.get(i) for i in ids]
            for job in jobs:
                note = f"{job.describe()}: {job.state} {100 * (job.progress or 0):.0f}% {job.message or ''}"
                if job.state == "running" and shown.get(job.id) != note:
                    shown[job.id] = note
                    print(note, flush=True)
            if all(job.state in FINAL for job in jobs):
                break
            time.sleep(0.5)
    finally:
        for line in supervisor.stop():
            print(line)
    jobs = [queue.get(i) for i in ids]
    for job in jobs:
        if job.state != DONE:
            if (line := f"{job.describe()} {job.state}: {job.error}") not in said:
                print(line)
            continue
        print(f"{job.describe()} done:")
        for line in describe_result(job_result(job)):
            print(f"  {line}")
    done = [job for job in jobs if job.state == DONE]
    if done:
        print()
        for line in results_table(done):
            print(line)
    return 1 if len(done) < len(jobs) else 0


def results_table(jobs) -> list[str]:
    """One table of what the jobs found: accuracy, Fisher Potential (and the original's), tuned
    end-to-end latency of both networks and the speedup, PyTorch's eager times beside."""
    found = {job.kind: job_result(job) for job in jobs}
    train, fisher, e2e = found.get("train"), found.get("fisher") or found.get("train"), found.get("e2e")
    test = found.get("test")
    rows = [("", "with the operator", "original", "ratio")]
    if train:
        accuracy = train.score.accuracy
        shown = "-" if accuracy is None else f"{accuracy:.3f}"
        rows.append(("accuracy (validation, 1 seed)", f"{shown} ({train.outcome})", "not trained here", ""))
    if test:
        paired = test.paired
        original = [a for a in test.original or () if a is not None]
        difference = "" if paired is None else f"{100 * paired.mean:+.1f} points"
        interval = test.score.test_difference_low, test.score.test_difference_high  # the verdict's
        if None not in interval:
            difference += f" [{100 * interval[0]:+.1f}, {100 * interval[1]:+.1f}]"
        rows.append(
            (
                f"accuracy (test, {len(test.runs)} seeds)",
                mean_std(test.accuracies),
                mean_std(original) if original else "",
                difference,
            )
        )
    if fisher:
        ours, theirs = fisher.fisher_potential, fisher.fisher_original
        rows.append(("Fisher Potential", f"{ours:.4g}", f"{theirs:.4g}", f"{ours / theirs:.2f}x" if theirs else ""))
    if e2e:
        tuned = "tuned" if e2e.tuned else "NOT all tuned"
        rows.append(
            (
                f"TVM, {tuned} ({e2e.deploy})",
                f"{e2e.latency_ms:.3f} ms",
                f"{e2e.baseline_latency_ms:.3f} ms",
                faster_text(e2e.speedup, e2e.speedup_low, e2e.speedup_high)
                if e2e.speedup is not None
                else faster_text(e2e.baseline_latency_ms / e2e.latency_ms),
            )
        )
        rows.append(
            (
                "PyTorch eager",
                f"{e2e.torch_latency_ms:.3f} ms",
                f"{e2e.torch_baseline_ms:.3f} ms",
                faster_text(e2e.torch_speedup),
            )
        )
        rows.append(  # what a user already has without TVM: below 1x, TVM is the slower way to run it
            (
                "TVM over PyTorch eager",
                f"{e2e.torch_latency_ms / e2e.latency_ms:.2f}x",
                f"{e2e.torch_baseline_ms / e2e.baseline_latency_ms:.2f}x",
                "",
            )
        )
    lines = table_lines(rows)
    if test and test.paired is not None:
        said, *power = test.judgement()
        lines += [f"on the test split, {said}", *power]
    return lines


def describe_result(result: FisherResult | HeldOutResult | E2EResult) -> list[str]:
    """A few readable lines for a finished fisher, train, test or e2e job's result."""
    if isinstance(result, HeldOutResult):
        return result.lines()
    lines = []
    if isinstance(result, FisherResult):
        verdict = "passes" if result.fisher_passes else "REJECTED (below the original)"
        lines.append(
            f"Fisher Potential {result.fisher_potential:.4g} vs original {result.fisher_original:.4g}: {verdict}"
        )
    if isinstance(result, TrainResult):
        curve = ", ".join(f"{a:.3f}" for a in result.accuracy_per_epoch)
        lines.append(f"validation accuracy per epoch: {curve}")
        if result.outcome != "trained":
            lines.append(f"{result.outcome}: {result.reason}")
    if isinstance(result, E2EResult):
        sources: dict[str, int] = {}
        for k in result.kernels:
            source = k.source.split(":")[0]
            sources[source] = sources.get(source, 0) + 1
        lines.append(
            f"{result.deploy}, {result.threads} thread(s): TVM {result.latency_ms:.3f} ms vs original "
            f"{result.baseline_latency_ms:.3f} ms ({result.baseline_latency_ms / result.latency_ms:.2f}x); "
            f"PyTorch eager {result.torch_latency_ms:.3f} ms vs {result.torch_baseline_ms:.3f} ms; kernels: "
            + ", ".join(f"{n} {s}" for s, n in sorted(sources.items()))
        )
        if result.untuned_kernels:
            lines.append(f"not tuned (TVM's default, so no basis for a speedup): {', '.join(result.untuned_kernels)}")
        if result.timing_note:
            lines.append(f"{result.timing_note}: time it again on a quiet machine")
        for kernel in result.operator_kernels:
            if kernel.ratio is not None:
                lines.append(
                    f"{kernel.kernel}: {kernel.in_network_ms:.4f} ms per call in the network, "
                    f"{kernel.alone_ms:.4f} ms alone ({kernel.ratio:.2f}x)"
                )
    replacement = result.replacement
    lines.append(f"replaced {replacement.replaced} of {len(replacement.layers)} convolutions")
    return lines
