"""`tessera assign` builds an assignment from candidate operators, and `tessera evaluate` scores it."""

from __future__ import annotations

import pytest
import torch

from app.cli import main
from core.data.assignment import (
    Assignment,
    read_stand_in,
)
from core.ir.serialize import load_operator, save_operator
from core.jobs.queue import DONE, JobQueue
from core.store import Store
from tests.core.test_assignment import POINTWISE
from tests.support import EXAMPLES

torch.set_num_threads(1)
DWS, GROUPED = load_operator(EXAMPLES / "depthwise_separable.json"), load_operator(EXAMPLES / "grouped_conv.json")
PLAN = {"layers.0.conv1": "depthwise_separable", "layers.1.conv2": "grouped_conv", "layers.3.conv1": "grouped_conv"}


def test_cli_builds_an_assignment_and_evaluates_it(tmp_path, capsys):
    out, store = tmp_path / "plan.json", tmp_path / "results.db"
    task = ["--width", "4", "--resolution", "8", "--limit", "200"]
    files = [str(EXAMPLES / f"{name}.json") for name in ("depthwise_separable", "grouped_conv")]
    assert main(["assign", *files, "-o", str(out), *task]) == 0
    printed = capsys.readouterr().out
    _, assignment = read_stand_in(out)
    assert isinstance(assignment, Assignment) and assignment.layers
    assert set(assignment.layers.values()) <= {"depthwise_separable", "grouped_conv"}
    assert f"wrote {out}: {len(assignment.layers)} of 20 convolutions of resnet18/w4 assigned" in printed
    assert main(["assign", *files, "-o", str(out), *task]) == 1
    assert "exists (--force overwrites it)" in capsys.readouterr().err

    assert main(["evaluate", str(out), "--fisher-only", "--now", "--store", str(store), *task]) == 0
    printed = capsys.readouterr().out
    assert "queued job 1 (fisher) on resnet18/w4" in printed and "Fisher Potential" in printed
    assert f"replaced {len(assignment.layers)} of 20 convolutions" in printed
    with Store(store) as s:
        (job,) = JobQueue(s).jobs()
        assert job.state == DONE and job.operator_id is None  # an assignment's score stays on its job
        assert not list(s.db["scores"].rows)
    assert main(["evaluate", str(out), "--backbone", "vgg", "--store", str(store)]) == 1
    assert "names layers of resnet18, not of vgg" in capsys.readouterr().err
    assert main(["evaluate", str(out), "--store", str(store), *task]) == 0
    printed = capsys.readouterr().out
    assert "queued job 2 (train)" in printed and "queued job 3 (test)" in printed and "queued job 4 (e2e)" in printed


def test_cli_assigns_strided_layers_when_asked(tmp_path, capsys):
    out = tmp_path / "plan.json"
    task = ["--width", "4", "--resolution", "8", "--limit", "200", "--replace", "standard,pointwise,strided"]
    assert main(["assign", str(EXAMPLES / "depthwise_separable.json"), "-o", str(out), *task]) == 0
    printed = capsys.readouterr().out
    _, assignment = read_stand_in(out)
    assert {"layers.2.conv1", "layers.2.shortcut.0"} & set(assignment.layers)  # stride 2: 3x3 and 1x1
    assert "convolutions of resnet18/w4[standard,pointwise,strided] assigned" in printed
    assert main(["assign", str(EXAMPLES / "conv2d.json"), "-o", str(out), "--force", "--replace", "dilated"]) == 1
    assert "convolutions to replace must be some of standard, pointwise, strided, got 'dilated'" in (
        capsys.readouterr().err
    )


@pytest.mark.slow
@pytest.mark.tvm
def test_cli_assigns_by_the_latency_tvm_measures(tmp_path, capsys):
    """Real measurements (TVM's default schedules, no tuning budget, one worker process) at a
    small deployment size: a 1x1 operator runs faster than the 3x3 convolution wherever both pass."""
    pointwise = tmp_path / "pointwise.json"
    save_operator(POINTWISE, pointwise)
    out = tmp_path / "plan.json"
    task = ["--width", "4", "--resolution", "8", "--limit", "200", "--tuning-dir", str(tmp_path / "tuning")]
    timed = ["--pick", "latency", "--trials", "0", "--deploy-width", "8", "--deploy-resolution", "8"]
    files = [str(EXAMPLES / "conv2d.json"), str(pointwise)]
    assert main(["assign", *files, "-o", str(out), *task, *timed, "--repeat", "2", "--min-repeat-ms", "2"]) == 0
    printed = capsys.readouterr().out
    assert "latency at resnet18/w8@8px (0 trials per kernel)" in printed and "timing the candidates" in printed
    _, assignment = read_stand_in(out)
    fastest = {layer: r for layer, r in assignment.reasons.items() if r.startswith("fastest passing: ")}
    # listed fastest first, each with its measured milliseconds; a latency in doubt (a machine too
    # busy for a narrow interval) never ranks: its candidate is left out there, saying so
    doubtful = [r for r in assignment.reasons.values() if "not timed: timing in doubt: " in r]
    assert fastest or doubtful, assignment.reasons
    assert all(r.startswith("fastest passing: pointwise") and r.count(" ms") == 2 for r in fastest.values())
    assert all(assignment.layers[layer] == "pointwise" for layer in fastest)
