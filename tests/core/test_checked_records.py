"""A network, and a measured operator, are compiled only with tuning records that compute what
TVM's default schedule computes (core.compile.checked): a faster record that computes wrong
numbers is skipped, said so, and remembered, instead of failing the check against torch."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms

from core.compile.checked import VERDICTS
from core.compile.errors import NumericalMismatch, TuningError
from core.compile.kernels.protocol import make_kernel
from core.compile.measure import measure_operator
from core.compile.place import ThisMachine
from core.compile.settings import Settings
from core.compile.target import local_target
from core.compile.workload import Workload
from core.ir.serialize import load_operator
from core.networks.relax_import import to_relax
from core.networks.schedules import compile_scheduled, fused, network_kernels, schedule_kernels
from core.networks.timing import check_network, vm_of
from tests.support import EXAMPLES, QUICK, TINY


def _commit(folder, mod, sch: s_tir.Schedule, seconds: float, target) -> None:
    database = ms.database.JSONDatabase(work_dir=str(folder))
    database.commit_tuning_record(
        ms.database.TuningRecord(
            sch.trace,
            database.commit_workload(mod),
            run_secs=[seconds],
            target=target,
            args_info=ms.arg_info.ArgInfo.from_prim_func(next(iter(mod.functions.values()))),
        )
    )


def test_a_record_that_computes_wrong_numbers_is_skipped_and_remembered(tmp_path):
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU()).eval()
    example = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    target = local_target(1)
    mod = to_relax(model, example, "a conv and a relu")
    [kernel] = network_kernels(fused(mod), target)
    right = s_tir.Schedule(kernel.mod)
    right.split(right.get_loops(right.get_sblock("conv2d_nchw"))[-1], factors=[None, 3])
    wrong = s_tir.Schedule(kernel.mod)  # the padded input kept as integers: TVM applies it as told
    wrong.unsafe_set_dtype(wrong.get_sblock("pad_temp"), 0, "int32")
    _commit(tmp_path, kernel.mod, right, 2e-3, target)
    _commit(tmp_path, kernel.mod, wrong, 1e-3, target)  # the faster: the one a database would pick

    unchecked = ms.database.JSONDatabase(work_dir=str(tmp_path))
    with pytest.raises(NumericalMismatch, match="tiny: TVM's output differs"):  # the network runs the wrong one
        check_network(vm_of(compile_scheduled(mod, target, unchecked)), model, example, "tiny")

    scheduled = schedule_kernels([kernel], target, tmp_path, trials_per_kernel=0)
    [schedule] = scheduled.kernels
    assert schedule.source == "database; 1 faster record(s) computed wrong numbers and were skipped"
    assert schedule.latency_ms == pytest.approx(2.0)
    assert check_network(vm_of(compile_scheduled(mod, target, scheduled.database)), model, example, "tiny") < 1e-4
    verdicts = json.loads((tmp_path / VERDICTS).read_text())
    assert sorted(bool(v) for v in verdicts.values()) == [False, True]  # one right, one wrong (with why)

    (tmp_path / VERDICTS).write_text(json.dumps(dict.fromkeys(verdicts, "remembered as wrong")))
    [again] = schedule_kernels([kernel], target, tmp_path, trials_per_kernel=0).kernels
    assert again.source == "untuned; 2 faster record(s) computed wrong numbers and were skipped"  # not re-checked


def test_a_record_applies_to_an_equal_kernel_whose_blocks_another_network_named(tmp_path):
    """Both networks end in the same mean, named after different relax variables ("lv3_red",
    "lv7_red"): the record tuned on the first (an rfactor, whose block the postprocessing finds
    by its made-up name) is renamed to compile the second, not refused by TVM's build."""
    target = local_target(1)
    example = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    head = [nn.Conv2d(3, 4, 3, padding=1), nn.ReLU()]
    first = nn.Sequential(*head, nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
    second = nn.Sequential(*head, nn.Conv2d(4, 4, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
    means = []
    for model in (first, second):
        [mean] = [k for k in network_kernels(fused(to_relax(model, example, "net")), target) if k.name == "mean"]
        means.append(mean)
    [reduction] = [name for name in means[0].mod.script().split('"') if name.endswith("_red")][:1]
    assert reduction not in means[1].mod.script()  # the premise: the two name the block differently
    sch = s_tir.Schedule(means[0].mod)
    sch.rfactor(sch.get_loops(sch.get_sblock(reduction))[-1], 0)
    sch.enter_postproc()
    sch.parallel(sch.get_loops(sch.get_sblock(f"{reduction}_rf"))[1])
    _commit(tmp_path, means[0].mod, sch, 1e-6, target)

    mod = to_relax(second, example, "the second network")
    scheduled = schedule_kernels(network_kernels(fused(mod), target), target, tmp_path, trials_per_kernel=0)
    [schedule] = [k for k in scheduled.kernels if k.kernel == "mean"]
    assert schedule.source == "database"  # the first network's record, renamed and checked right
    assert check_network(vm_of(compile_scheduled(mod, target, scheduled.database)), second, example, "net") < 1e-4


def test_a_database_whose_record_does_not_fit_its_kernel_is_refused_by_name(tmp_path):
    """A record of another kernel's steps under this kernel's workload (a hand-edited or foreign
    file): TVM refuses to load the folder, and the error names it and what to do."""
    target = local_target(1)
    example = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1)).eval()
    kernels = network_kernels(fused(to_relax(model, example, "net")), target)
    [conv] = [k for k in kernels if "conv2d" in k.name]
    [mean] = [k for k in kernels if k.name == "mean"]
    foreign = s_tir.Schedule(mean.mod)
    foreign.parallel(foreign.get_loops(foreign.get_sblock("T_divide"))[1])
    _commit(tmp_path, conv.mod, foreign, 1e-6, target)

    with pytest.raises(TuningError, match=f"tuning database {tmp_path} cannot be loaded.*delete that folder"):
        schedule_kernels(kernels, target, tmp_path, trials_per_kernel=0)


def test_measuring_an_operator_skips_a_faster_tuned_record_that_computes_wrong_numbers(tmp_path):
    """The operator's tuning folder holds a right record and a faster wrong one (as a tuned
    winograd convolution once doubled its output): the measurement keeps the right one and
    says what it skipped, instead of failing its check against torch."""
    workload = Workload.prepare(load_operator(EXAMPLES / "conv2d.json"), TINY, 1, 0)
    place = ThisMachine(local_target(1))
    settings = Settings(tune_trials=2, cost_model="random", work_dir=tmp_path, **QUICK)
    mod = workload.lowered.module()
    right = s_tir.Schedule(mod)
    output = right.get_child_blocks(right.get_sblock("root"))[-1]
    right.split(right.get_loops(output)[-1], factors=[None, 2])
    wrong = s_tir.Schedule(mod)  # the input read through a copy kept as integers: TVM applies it as told
    copy = wrong.cache_read(wrong.get_child_blocks(wrong.get_sblock("root"))[-1], 0, "global")
    wrong.unsafe_set_dtype(copy, 0, "int32")
    _commit(tmp_path, mod, right, 2e-3, place.target)
    _commit(tmp_path, mod, wrong, 1e-3, place.target)  # the faster: the one a database would pick

    measured = measure_operator(workload, make_kernel(workload, place, settings), place, settings)
    assert measured.new_trials == 0 and measured.trial_count == 2  # the budget was spent: nothing tuned
    assert measured.max_abs_error < 1e-4
    assert measured.schedule_source.endswith("; 1 faster tuned record(s) computed wrong numbers and were skipped")
    verdicts = json.loads((tmp_path / VERDICTS).read_text())
    assert sorted(bool(v) for v in verdicts.values()) == [False, True]
