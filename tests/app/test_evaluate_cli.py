"""`tessera evaluate`: accuracy and end-to-end jobs queued, or run now with one table."""

from __future__ import annotations

import pytest

from app.cli import main
from core.store import Store
from core.train.errors import EvaluationError
from core.train.settings import EvalSettings
from tests.core.accuracy_settings import scores
from tests.support import EXAMPLES


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
            "--backbone",
            "vgg",
            "--width",
            "4",
            "--resolution",
            "8",
            "--limit",
            "100",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "queued job 1 (fisher shift_conv) on vgg/w4 at digits-shifted@8px" in out
    assert "Fisher Potential" in out and "vs original" in out and "replaced 8 of 8 convolutions" in out
    with Store(path) as store:
        (row,) = scores(store)
        assert (row["backbone"], row["epochs"], row["accuracy"]) == ("vgg/w4", 0, None)
        assert row["fisher_potential"] > 0


def test_evaluate_rejects_bad_requests_before_queueing(tmp_path, capsys):
    path = tmp_path / "none.db"
    base = ["evaluate", str(EXAMPLES / "conv2d.json"), "--store", str(path)]
    assert main([*base, "--dataset", str(tmp_path / "missing")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main([*base, "--width", "0"]) == 1
    assert "width must be a whole number >= 1" in capsys.readouterr().err
    assert main([*base, "--epochs", "0"]) == 1
    assert main([*base, "--theta", "2"]) == 1
    assert "theta" in capsys.readouterr().err
    assert not path.exists()
    with pytest.raises(EvaluationError, match="val_fraction"):
        EvalSettings(val_fraction=0)


@pytest.mark.slow
@pytest.mark.tvm
def test_evaluate_now_prints_one_table_and_says_when_the_networks_are_not_tuned(tmp_path, capsys):
    path = tmp_path / "cli.db"
    args = ["evaluate", str(EXAMPLES / "depthwise_separable.json"), "--now", "--store", str(path)]
    sizes = ["--backbone", "vgg", "--width", "4", "--resolution", "8", "--limit", "100", "--epochs", "1"]
    deploy = ["--deploy-width", "4", "--deploy-resolution", "8", "--tuning-dir", str(tmp_path / "tuning")]
    assert main([*args, *sizes, *deploy, "--no-transfer", "--from", str(tmp_path)]) == 1
    assert "--from names where transfer-tuning takes schedules from; drop --no-transfer" in capsys.readouterr().err
    assert main([*args, *sizes, *deploy, "--trials", "0", "--no-transfer"]) == 0
    out = capsys.readouterr().out
    table = out[out.rindex("with the operator") :].splitlines()
    assert table[1].startswith("accuracy (proxy)") and table[2].startswith("Fisher Potential")
    assert table[3].startswith("TVM, NOT all tuned (vgg/w4@8px)") and table[4].startswith("PyTorch eager")
    assert "not tuned (TVM's default, so no basis for a speedup)" in out
    with Store(path) as store:
        e2e = [row for row in scores(store) if row["e2e_latency_ms"] is not None]
        assert [(row["e2e_tuned"], row["deploy"]) for row in e2e] == [(0, "vgg/w4@8px")]
