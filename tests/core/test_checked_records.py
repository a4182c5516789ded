"""A network is compiled only with tuning records that compute what TVM's default schedule
computes (core.networks.checked): a faster record that computes wrong numbers is skipped,
said so, and remembered, instead of failing the network's check against torch."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms

from core.compile.errors import NumericalMismatch
from core.compile.target import local_target
from core.networks.checked import VERDICTS
from core.networks.relax_import import to_relax
from core.networks.schedules import compile_scheduled, fused, network_kernels, schedule_kernels
from core.networks.timing import check_network, vm_of


def _commit(folder, kernel, sch: s_tir.Schedule, seconds: float, target) -> None:
    database = ms.database.JSONDatabase(work_dir=str(folder))
    database.commit_tuning_record(
        ms.database.TuningRecord(
            sch.trace,
            database.commit_workload(kernel.mod),
            run_secs=[seconds],
            target=target,
            args_info=ms.arg_info.ArgInfo.from_prim_func(next(iter(kernel.mod.functions.values()))),
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
    _commit(tmp_path, kernel, right, 2e-3, target)
    _commit(tmp_path, kernel, wrong, 1e-3, target)  # the faster: the one a database would pick

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
