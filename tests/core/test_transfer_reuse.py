"""Transfer-tuning with real tuned schedules: conv2d tuned at one size (4 MetaSchedule trials,
random cost model, in a temporary tuning root) and its schedules reused at another size,
checked against torch; inapplicable ones skipped with their reasons (the tuning root is
tests/conftest.py's tuned_root; `tessera tune --transfer` is tested in tests/app)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.codegen.to_tvm import lower
from core.compile.kernel_class import kernel_class
from core.compile.kernels.default import DefaultKernel
from core.compile.place import ThisMachine
from core.compile.settings import Settings
from core.compile.target import local_target
from core.compile.transfer import Bench, NotApplicable, apply_schedule, postprocessors, rederive_tiles, transfer_kernel
from core.compile.transfer_records import schedules_of, tuned_kernels
from core.compile.transfer_sources import open_source
from core.compile.workload import Workload
from core.ir.serialize import canonical_document, graph_from_document, read_document
from tests.support import EXAMPLES

pytestmark = [pytest.mark.tvm, pytest.mark.slow]

CONV = EXAMPLES / "conv2d.json"
OTHER = {"C_in": 8, "C_out": 6, "H": 10, "W": 6, "K": 3}  # the same class at other sizes


def conv_at(bindings):
    """conv2d lowered in canonical form (as jobs lower it), its torch module and a Bench over both."""
    graph = graph_from_document(canonical_document(read_document(CONV)))
    workload = Workload.prepare(graph, bindings, batch=1, seed=0)
    place = ThisMachine(local_target(1))
    untuned = DefaultKernel(workload, place, Settings()).untuned()
    return workload.lowered, Bench(place, untuned.arguments, workload.reference, "conv2d")


def test_tile_sizes_are_re_derived_keeping_inner_factors_that_divide():
    assert rederive_tiles(12, [2, 1, 1, 4]) == [3, 1, 1, 4]  # 4 divides 12: kept
    assert rederive_tiles(10, [1, 1, 1, 8]) == [5, 1, 1, 2]  # 8 does not: gcd(8, 10) = 2
    assert rederive_tiles(56, [1, 2, 2, 16]) == [7, 1, 1, 8]  # gcd(16, 56) = 8; 2 does not divide 7
    assert rederive_tiles(7, [1, 2, 4]) == [7, 1, 1] and rederive_tiles(1, [4, 8]) == [1, 1]


def test_a_tuned_schedule_is_reused_at_another_size(tuned_root):
    kernels = tuned_kernels(open_source(tuned_root).folders)
    assert len(kernels) == 1 and kernels[0].database.name.endswith("C_in=4,C_out=4,H=8,K=3,N=1,W=8")
    lowered, bench = conv_at(OTHER)
    kclass = kernel_class(lowered.func)
    assert kernels[0].kclass == kclass  # tuned at 4x8x8, the same class at 8->6 channels, 10x6
    schedules = schedules_of(kclass.key, kernels, top_k=4)
    assert schedules and [s.latency_ms for s in schedules] == sorted(s.latency_ms for s in schedules)
    assert schedules[0].kernel == "1x4x8x8, 4x4x3x3, 1x4x8x8"
    default = lowered.module()
    postprocs = postprocessors(default, bench.place.target)
    for schedule in schedules:
        scheduled = apply_schedule(default, schedule.trace, postprocs).mod
        assert scheduled.script() != default.script()  # really scheduled: tiled, parallel, vectorised
        assert "T.parallel" in scheduled.script() or "T.vectorized" in scheduled.script()
        assert bench.check(bench.build(scheduled)) < 1e-4  # the same numbers as torch's module


def test_schedules_that_do_not_apply_are_skipped_with_their_reasons(tuned_root):
    kernels = tuned_kernels(open_source(tuned_root).folders)
    good = schedules_of(kernels[0].kclass.key, kernels)[0]
    tile = next(i for i in good.trace.insts if i.kind.name == "SamplePerfectTile" and int(i.attrs[0]) == 4)
    factors = [int(f) for f in good.trace.get_decision(tile)]  # a record that lost a tile factor
    broken = replace(good, trace=good.trace.with_decision(tile, factors[:3], remove_postproc=False))

    lowered, bench = conv_at(OTHER)
    done = transfer_kernel(lowered.module(), kernel_class(lowered.func), bench, [good, broken])
    assert [t.skipped is None for t in done.tried] == [True, False] and done.applied == 1
    assert done.skip_reasons == {"tiles cannot be re-derived: 3 factors recorded for a 4-way split": 1}
    assert done.summary()["found"] == 2 and done.summary()["skipped"] == 1

    separable = graph_from_document(canonical_document(read_document(EXAMPLES / "depthwise_separable.json")))
    other = lower(separable, {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3}).module()
    with pytest.raises(NotApplicable, match="^does not apply: "):  # another class: another loop nest
        apply_schedule(other, good.trace, postprocessors(other, bench.place.target))
