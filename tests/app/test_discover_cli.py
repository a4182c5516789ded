"""`tessera discover`: the discovery loop from the command line."""

from __future__ import annotations

import json

import pytest
import torch

from app.cli import main
from core.store import Store
from tests.support import TINY_NETWORK

pytestmark = pytest.mark.slow

PROXY = {"backbone": "vgg", "width": 4, "resolution": 8, "limit": 100, "epochs": 2, "max_batches": 2}


def test_tessera_discover_runs_and_prints_the_stages(tmp_path, capsys):
    path = tmp_path / "cli.db"
    args = [
        "discover",
        "--strategy",
        "canvas",
        "--samples",
        "2",
        "--minutes",
        "5",
        *TINY_NETWORK,
        "--epochs",
        "1",
        "--limit",
        "100",
        "--max-batches",
        "2",
        "--no-tune",
        "--fisher-threshold",
        "0",
        "--fisher-batch",
        "8",
        "--seeds",
        "2",
        "--seed-cap",
        "4",
        "--train-device",
        "cpu",
        "--store",
        str(path),
    ]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "survivor(s); end-to-end timing is off." in out and "survivor" not in err  # said once, by the report
    assert "2 proposed" in out and "The original network: " in out and "proxy (validation) accuracy" in out
    assert "test accuracy over seeds 1, 2: " in out and "(2 seeds)" in out  # the seed rule's first look only
    assert "Judged 2 candidate(s): " in out and " undecided" in out  # how the verdicts fell, undecided apart
    with Store(path) as store:
        (search,) = store.db["searches"].rows
        config = json.loads(search["config"])
        assert config["strategy"] == "canvas" and config["test_seeds"] == 2 and config["seed_cap"] == 4
        assert config["evaluation"]["fisher_batch"] == 8 and config["evaluation"]["device"] == "cpu"
        assert len(json.loads(search["baseline_test"])) == 2
    # 0 minutes resumes the run and finishes what it has, proposing nothing
    assert main([*args, "--minutes", "0"]) == 0  # the last --minutes counts
    out = capsys.readouterr().out
    assert "for 0 minutes" in out and "run 1 (" in out and "2 proposed" in out


def test_tessera_discover_refuses_a_missing_dataset_or_a_gpu_this_machine_lacks_before_starting(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    path = tmp_path / "never.db"
    base = ["discover", "--store", str(path)]
    assert main([*base, "--dataset", str(tmp_path / "missing")]) == 1
    assert f"{tmp_path / 'missing'}: no such file or folder" in capsys.readouterr().err
    assert main([*base, "--train-device", "cuda"]) == 1
    assert "training on CUDA was asked for (--train-device cuda), but torch sees no CUDA GPU" in capsys.readouterr().err
    assert main([*base, "--amp"]) == 1
    assert "mixed precision (--amp) needs a CUDA GPU" in capsys.readouterr().err
    assert not path.exists()
