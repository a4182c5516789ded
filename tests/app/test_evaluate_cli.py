"""`tessera evaluate`: accuracy and end-to-end jobs queued, or run now with one table."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from app.cli import build_parser, main
from app.cli.discover import config_of
from core.data.datasets import DEFAULT_DATASET
from core.jobs.queue import JobQueue
from core.search.settings import DiscoveryConfig
from core.store import Store
from core.train.errors import EvaluationError
from core.train.sequential import DEFAULT_RULE
from core.train.settings import EvalSettings
from tests.core.accuracy_settings import scores
from tests.support import EXAMPLES, TINY_NETWORK


@pytest.mark.slow
def test_evaluate_fisher_only_now(tmp_path, capsys):
    path = tmp_path / "cli.db"
    code = main(
        [
            "evaluate",
            str(EXAMPLES / "shift_conv.json"),
            "--fisher-only",
            "--now",
            "--store",
            str(path),
            *TINY_NETWORK,
            "--limit",
            "100",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"queued job 1 (fisher shift_conv) on vgg/w4 at {DEFAULT_DATASET}@8px" in out
    assert "Fisher Potential" in out and "vs original" in out and "replaced 8 of 8 convolutions" in out
    with Store(path) as store:
        (row,) = scores(store)
        assert (row["backbone"], row["epochs"], row["accuracy"]) == ("vgg/w4", 0, None)
        assert row["fisher_potential"] > 0


@pytest.mark.slow
def test_evaluate_now_says_a_failed_job_once_with_the_file_and_the_reason(tmp_path, capsys):
    broken = tmp_path / "broken.npz"  # its images are read only in the job: NaN is found there
    images = np.full((20, 8, 8), np.nan, np.float32)
    np.savez(broken, images=images, labels=np.arange(20) % 2)
    args = ["evaluate", str(EXAMPLES / "conv2d.json"), "--fisher-only", "--now", "--store", str(tmp_path / "s.db")]
    assert main([*args, "--dataset", str(broken)]) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if " failed: " in line]
    assert failed == [f"job 1 (fisher conv2d) failed: DatasetError: {broken}: images contains NaN or infinite values"]


def test_evaluate_rejects_bad_requests_before_queueing(tmp_path, capsys, monkeypatch):
    path = tmp_path / "none.db"
    base = ["evaluate", str(EXAMPLES / "conv2d.json"), "--store", str(path)]
    assert main([*base, "--dataset", str(tmp_path / "missing")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main([*base, "--width", "0"]) == 1
    assert "width must be a whole number >= 1" in capsys.readouterr().err
    assert main([*base, "--epochs", "0"]) == 1
    assert main([*base, "--theta", "2"]) == 1
    assert "theta" in capsys.readouterr().err
    assert main([*base, "--train-device", "cpu", "--amp"]) == 1
    assert "mixed precision (amp) needs a CUDA GPU; it cannot train on the CPU" in capsys.readouterr().err
    assert main([*base, "--margin", "5"]) == 1
    assert "the margin must be a fraction between 0 and 1 (0.01: 1 point), got 5.0" in capsys.readouterr().err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert (
        main([*base, "--train-device", "cuda", "--now", "--no-e2e"]) == 1
    )  # queued, a job may train on a Ray node's GPU
    assert "torch sees no CUDA GPU here" in capsys.readouterr().err
    assert not path.exists()
    with pytest.raises(EvaluationError, match="val_fraction"):
        EvalSettings(val_fraction=0)


def test_evaluate_queues_a_test_over_seeds_after_its_own_and_can_train_the_deployed_width(tmp_path, capsys):
    path = tmp_path / "q.db"
    base = ["evaluate", str(EXAMPLES / "conv2d.json"), "--store", str(path), "--seed", "4", "--no-e2e"]
    assert main([*base, "--train-width", "deploy", "--train-device", "cpu"]) == 0
    assert main([*base, "--train-width", "deploy", "--deploy-width", "32", "--seeds", "2", "--margin", "0.02"]) == 0
    assert main([*base, "--width", "8", "--seeds", "0"]) == 0
    assert "queued job 2 (test conv2d) on resnet18/w64" in capsys.readouterr().out
    with Store(path) as store:
        jobs = [(job.kind, job.payload) for job in JobQueue(store).jobs()]
    assert [kind for kind, _ in jobs] == ["train", "test", "train", "test", "train"]
    assert [p["settings"]["width"] for _, p in jobs] == [64, 64, 32, 32, 8]  # ResNet-18's standard width, or the given
    (_, first), (_, second) = (j for j in jobs if j[0] == "test")
    # by default seeds are added until the verdict decides: up to the rule's cap, judged against the margin
    assert first["seeds"] == list(range(5, 5 + DEFAULT_RULE.cap)) and first["rule"]["cap"] == DEFAULT_RULE.cap
    assert first["margin"] == first["rule"]["margin"] == 0.01 and first["pair"] and first["original"] is None
    assert second["seeds"] == [5, 6] and second["margin"] == 0.02 and second["rule"] is None  # --seeds N: fixed
    assert first["training"]["device"] == "cpu" and jobs[2][1]["training"]["device"] == "auto"


@pytest.mark.slow
@pytest.mark.tvm
def test_evaluate_now_prints_one_table_and_says_when_the_networks_are_not_tuned(tmp_path, capsys):
    path = tmp_path / "cli.db"
    args = ["evaluate", str(EXAMPLES / "depthwise_separable.json"), "--now", "--store", str(path)]
    sizes = [
        *TINY_NETWORK,
        "--limit",
        "100",
        "--epochs",
        "1",
        "--seeds",
        "2",
    ]
    deploy = ["--deploy-width", "4", "--deploy-resolution", "8", "--tuning-dir", str(tmp_path / "tuning")]
    assert main([*args, *sizes, *deploy, "--no-transfer", "--from", str(tmp_path)]) == 1
    assert "--from names where transfer-tuning takes schedules from; drop --no-transfer" in capsys.readouterr().err
    assert main([*args, *sizes, *deploy, "--trials", "0", "--no-transfer"]) == 0
    out = capsys.readouterr().out
    table = out[out.rindex("with the operator") :].splitlines()
    assert table[1].startswith("accuracy (validation, 1 seed)") and table[2].startswith("accuracy (test, 2 seeds)")
    assert "(2 seeds)" in table[2] and "points [" in table[2]  # mean +- std of both, the paired difference
    assert table[3].startswith("Fisher Potential")
    assert table[4].startswith("TVM, NOT all tuned (vgg/w4@8px)") and table[5].startswith("PyTorch eager")
    assert re.match(r"TVM over PyTorch eager +[\d.]+x +[\d.]+x$", table[6])  # what a user has without TVM
    assert table[7].startswith("on the test split, ") and "the 95% interval of the difference" in table[7]
    assert "not tuned (TVM's default, so no basis for a speedup)" in out
    assert "smallest difference from the margin this run could detect (80% power, 95% interval)" in out
    with Store(path) as store:
        e2e = [row for row in scores(store) if row["e2e_latency_ms"] is not None]
        assert [(row["e2e_tuned"], row["deploy"]) for row in e2e] == [(0, "vgg/w4@8px")]


def test_evaluate_and_discover_replace_strided_convolutions_when_asked(tmp_path, capsys):
    """--replace reaches the jobs (their settings, the network's label) and a discovery run's
    proxy task and deployment; the default leaves a run's settings, and so its key, as before."""
    path = tmp_path / "queued.db"
    replace = ["--replace", "strided,standard"]
    assert main(["evaluate", str(EXAMPLES / "conv2d.json"), "--store", str(path), *replace]) == 0
    assert "on resnet18/w16[standard,strided] at" in capsys.readouterr().out
    with Store(path) as store:
        train, test, e2e = JobQueue(store).jobs()
        assert test.payload["settings"]["replace"] == ["standard", "strided"]
        assert train.payload["settings"]["replace"] == ["standard", "strided"]
        assert e2e.payload["deploy"]["replace"] == ["standard", "strided"]
    discover = build_parser("discover")
    config = config_of(discover.parse_args(["discover", *replace]))
    assert config.evaluation["replace"] == ["standard", "strided"] and config.deploy["replace"] == [
        "standard",
        "strided",
    ]
    default = config_of(discover.parse_args(["discover"])).to_dict()
    assert "replace" not in default["evaluation"] and "replace" not in default["deploy"]
    assert not {"device", "amp"} & set(default["evaluation"])  # defaults left out: earlier runs keep their key
    earlier = {k: v for k, v in default.items() if k != "test_seeds"}  # a run from before test accuracy
    assert DiscoveryConfig.from_dict(earlier).key == DiscoveryConfig.from_dict(default).key


@pytest.mark.slow
def test_evaluate_now_adds_seeds_until_the_verdict_decides_then_a_fixed_count_says_its_power(tmp_path, capsys):
    args = ["evaluate", str(EXAMPLES / "conv2d.json"), "--now", "--store", str(tmp_path / "s.db"), "--no-e2e"]
    args += [*TINY_NETWORK, "--limit", "100", "--epochs", "1", "--margin", "0.9"]
    assert main(args) == 0
    out = capsys.readouterr().out
    # a 90-point margin decides at the first look: 3 seeds, and the table says so
    assert "accuracy (test, 3 seeds)" in out and "seed rule: within 90 points after 3 seeds" in out
    assert "stopped: the interval decided" in out and "smallest difference" not in out
    assert main([*args, "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "accuracy (test, 2 seeds)" in out and "seed rule" not in out
    assert "smallest difference from the margin this run could detect (80% power, 95% interval)" in out
    # the original's trainings of seeds 1 and 2 came from the first job: only the operator trained
    assert "the original, seed" not in out
