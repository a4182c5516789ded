"""Benchmark: transfer-tuning vs MetaSchedule from scratch on a network's kernels (issue 11).

Network A (the VGG-style backbone at width 8) has its convolution kernels tuned from
scratch with a small budget; their schedules are then transferred to network B (the same
layout at width 12: the same kernel class at other sizes), whose kernels are also tuned
from scratch with a larger budget. (ResNet-18/34 work too, with three kernel classes,
but with 11 kernels each they take several times longer.) From-scratch search time counts
building candidates in processes started once per run (core.compile.build_pool; TVM's own
builder started them for every batch, about 7 s each). Printed: transfer-tuning's
speedup over untuned on B and its search time, from-scratch tuning's speedup and
search time on B, and how long from-scratch tuning took to match transfer-tuning's
speedup (published, Gibson 2023 against Ansor: 6.5x longer on a server CPU, 10.8x on
an edge CPU). Budgets are tiny so that it finishes in a few minutes on a loaded
2-core machine; figures from such budgets are indicative only.

Every kernel is timed the same way (number=3, min_repeat_ms=50, as MetaSchedule's
runner), untuned, transferred and tuned; the from-scratch convergence curve uses the
latencies MetaSchedule recorded for each trial. Tuning databases go to a temporary
folder, never the user's cache. Run: `python -m tests.benchmarks.bench_transfer`
or `tessera bench transfer`."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

SOURCE = ("vgg", 8, 16)  # network A: name, width, resolution
TARGET = ("vgg", 12, 16)  # network B
ONLY = ("conv2d",)  # their convolution kernels (the rest is cheap element-wise work)
TRIALS_A = 2  # MetaSchedule trials per kernel of A
TRIALS_B = 4  # MetaSchedule trials per kernel of B, from scratch
COST_MODEL = "xgb"


def main() -> None:
    from core.compile.target import core_count, local_target, use_threads
    from core.compile.transfer_sources import open_source
    from core.compile.warm import warm_tensor_intrin
    from core.data.specs import BackboneSpec
    from core.networks.backbone_tuning import backbone_kernels, transfer_network, tune_network, untuned_times

    use_threads(core_count())
    target = local_target(core_count())
    warm_tensor_intrin()  # once per process, for both methods: not counted as search time
    a, b = BackboneSpec(*SOURCE), BackboneSpec(*TARGET)
    kernels_a, kernels_b = backbone_kernels(a, target, ONLY), backbone_kernels(b, target, ONLY)
    for label, spec, kernels in (("A", a, kernels_a), ("B", b, kernels_b)):
        print(
            f"network {label}: {spec.label} at {spec.resolution}px, {len(kernels)} conv kernels "
            f"({sum(k.weight for k in kernels)} calls), kernel classes: {len({k.kclass.key for k in kernels})}"
        )
    print(
        f"budgets (small, for a few minutes on {core_count()} cores): A {TRIALS_A} trials per kernel, "
        f"B from scratch {TRIALS_B} per kernel, cost model {COST_MODEL}"
    )

    with tempfile.TemporaryDirectory(prefix="tessera-bench-transfer-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        tuned_a = tune_network(kernels_a, target, root / "A", TRIALS_A * len(kernels_a), cost_model=COST_MODEL)
        print(
            f"\nA tuned from scratch: {tuned_a['trials']} trials in {tuned_a['search_s']:.0f} s, "
            f"kernel time {tuned_a['untuned_ms']:.3f} -> {tuned_a['tuned_ms']:.3f} ms "
            f"({tuned_a['speedup_vs_untuned']:.2f}x)  [{time.perf_counter() - start:.0f} s with timing]"
        )

        baseline = untuned_times(kernels_b, target)  # the same untuned times for both methods on B
        moved = transfer_network(kernels_b, [open_source(root / "A")], target, baseline=baseline)
        print(
            f"\nB by transfer-tuning from A: {moved['found']} schedules found, {moved['applied']} applied, "
            f"{moved['skipped']} skipped {moved['skip_reasons'] or ''}"
        )
        print(
            f"  kernel time untuned {moved['untuned_ms']:.3f} ms -> {moved['tuned_ms']:.3f} ms: "
            f"speedup {moved['speedup_vs_untuned']:.2f}x, search time {moved['search_s']:.1f} s"
        )

        scratch = tune_network(
            kernels_b, target, root / "B", TRIALS_B * len(kernels_b), cost_model=COST_MODEL, baseline=baseline
        )
        print(
            f"\nB from scratch: {scratch['trials']} trials in {scratch['search_s']:.0f} s, kernel time "
            f"{scratch['untuned_ms']:.3f} -> {scratch['tuned_ms']:.3f} ms: "
            f"speedup {scratch['speedup_vs_untuned']:.2f}x"
        )

        curve = scratch["curve"]
        per_trial = scratch["search_s"] / len(curve)  # its batches overlap and report at the end: no per-trial clock
        print(
            "\nfrom-scratch convergence on B (each kernel with its best schedule so far, timed like the rest; "
            "search time shared out evenly over the trials):"
        )
        for done in sorted({*range(len(kernels_b), len(curve) + 1, len(kernels_b)), len(curve)}):
            print(
                f"  {done:4d} trials  ~{done * per_trial:5.0f} s  {curve[done - 1]:.3f} ms "
                f"({scratch['untuned_ms'] / curve[done - 1]:.2f}x)"
            )
        reached = next((i + 1 for i, ms in enumerate(curve) if ms <= moved["tuned_ms"]), None)
        ratio = "(published: Ansor needed 6.5x on a server CPU, 10.8x on an edge CPU)"
        print("\nsummary")
        print(f"  transfer-tuning: {moved['speedup_vs_untuned']:.2f}x over untuned in {moved['search_s']:.1f} s")
        print(
            f"  from scratch:    {scratch['speedup_vs_untuned']:.2f}x over untuned in {scratch['search_s']:.1f} s "
            f"({scratch['trials']} trials)"
        )
        if reached is None:
            print(
                f"  from scratch did not reach transfer-tuning's speedup within {len(curve)} trials: it needs "
                f"more than {scratch['search_s'] / moved['search_s']:.1f}x transfer-tuning's search time {ratio}"
            )
        else:
            print(
                f"  from scratch matched transfer-tuning after {reached} trials, ~{reached * per_trial:.0f} s: "
                f"{reached * per_trial / moved['search_s']:.1f}x transfer-tuning's search time {ratio}"
            )


if __name__ == "__main__":
    main()
