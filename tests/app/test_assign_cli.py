"""`tessera assign` builds an assignment from candidate operators, and `tessera evaluate` scores it."""

from __future__ import annotations

import torch

from app.cli import main
from core.data.assignment import (
    Assignment,
    read_stand_in,
)
from core.ir.serialize import load_operator
from core.jobs.queue import DONE, JobQueue
from core.store import Store
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
