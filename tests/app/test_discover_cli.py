"""`tessera discover`: the discovery loop from the command line."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from core.store import Store

pytestmark = pytest.mark.slow

PROXY = {"backbone": "vgg", "width": 4, "resolution": 8, "limit": 100, "epochs": 2, "max_batches": 2}


def test_tessera_discover_runs_and_prints_the_stages(tmp_path, capsys):
    path = tmp_path / "cli.db"
    code = main(
        [
            "discover",
            "--strategy",
            "canvas",
            "--samples",
            "2",
            "--minutes",
            "5",
            "--backbone",
            "vgg",
            "--width",
            "4",
            "--resolution",
            "8",
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
            "--train-device",
            "cpu",
            "--store",
            str(path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 proposed" in out and "the original network's proxy (validation) accuracy" in out
    assert "its test accuracy over seeds 1, 2: " in out and "(2 seeds)" in out
    with Store(path) as store:
        (search,) = store.db["searches"].rows
        config = json.loads(search["config"])
        assert config["strategy"] == "canvas" and config["test_seeds"] == 2
        assert config["evaluation"]["fisher_batch"] == 8 and config["evaluation"]["device"] == "cpu"
        assert len(json.loads(search["baseline_test"])) == 2
