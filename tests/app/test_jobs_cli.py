"""`tessera submit / worker / jobs / results` (app/cli/) on a real store file."""

import json
import sqlite3
from contextlib import closing

import pytest

from core.errors import TesseraError
from core.ir.serialize import read_document
from core.jobs.queue import QUEUED, JobQueue
from core.jobs.registry import handlers
from core.store import Store
from tests.core.jobs_checks import check_worker_killed_mid_job
from tests.core.variants_data import add_variants
from tests.support import command


def test_submit_list_cancel_retry(tmp_path, examples_dir, capsys, operator_parses):
    db = str(tmp_path / "cli.db")
    conv = str(examples_dir / "conv2d.json")
    assert command("submit", conv, "--bind", "H=28,W=28", "--tune-trials", "8", "--store", db) == 0
    assert operator_parses == [conv]  # the file is read once: checked, saved and its jobs planned
    assert "queued job 1: tune (8 trials) conv2d with C_in=64,C_out=64,H=28,W=28,K=3" in capsys.readouterr().out
    with Store(db) as store:
        job = JobQueue(store).get(1)
        assert (job.state, job.payload["bindings"]["H"], job.payload["tune_trials"], job.payload["device"]) == (
            QUEUED,
            28,
            8,
            "local",
        )
        assert job.payload["operator"] == read_document(conv) and job.operator_name == "conv2d"

    assert command("jobs", "--store", db) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "kind", "state", "tries", "progress", "operator", "where", "note"]
    assert lines[1].split() == ["1", "measure", "queued", "0/3", "0%", "conv2d", "-"]
    assert command("jobs", "cancel", "1", "--store", db) == 0
    assert "cancelled job 1 (measure conv2d)" in capsys.readouterr().out
    assert command("jobs", "cancel", "1", "--store", db) == 1
    assert "job 1 (measure conv2d) has already ended (cancelled)" in capsys.readouterr().out
    assert command("jobs", "retry", "1", "--store", db) == 0
    with Store(db) as store:
        assert JobQueue(store).get(1).state == QUEUED
    with pytest.raises(TesseraError, match="`tessera jobs cancel` needs a job id"):
        command("jobs", "cancel", "--store", db)
    with pytest.raises(TesseraError, match="there is no job 9"):
        command("jobs", "retry", "9", "--store", db)


def test_submit_variants_and_transfer(tmp_path, examples_dir, capsys):
    """--variants queues algorithm x tuned/untuned (the convolution algorithms only for
    convolutions, saying why otherwise); --transfer queues one transfer job on this machine, taking --from paths."""
    db = str(tmp_path / "cli.db")
    grouped = str(examples_dir / "grouped_conv.json")
    assert command("submit", grouped, "--variants", "--tune-trials", "4", "--store", db) == 0
    out = capsys.readouterr().out
    assert "tune (4 trials) gspc grouped_conv" in out
    assert "note: algorithm 'separable' runs depthwise-separable convolutions only" in out
    assert command("submit", str(examples_dir / "involution.json"), "--variants", "--store", db) == 0
    out = capsys.readouterr().out
    assert "measure default involution" in out and "note: algorithm 'gspc' runs grouped convolutions only" in out
    with Store(db) as store:
        jobs = JobQueue(store).jobs()
    algorithms = ("default", "gspc", "nchwc", "im2col", "winograd")
    assert [(j.operator_name, j.payload["algorithm"], j.payload["tune_trials"]) for j in jobs] == [
        *(("grouped_conv", a, n) for a in algorithms for n in (0, 4)),
        ("involution", "default", 0),
    ]

    tuning = tmp_path / "tuning"
    tuning.mkdir()
    assert command("submit", grouped, "--transfer", "--from", str(tuning), "--top-k", "2", "--store", db) == 0
    assert "queued job 12: transfer-tune grouped_conv" in capsys.readouterr().out
    with Store(db) as store:
        job = JobQueue(store).get(12)
    assert job.kind == "transfer" and job.payload["sources"] == [str(tuning)] and job.payload["top_k"] == 2
    assert job.payload["device"] == "local" and "tune_trials" not in job.payload
    with pytest.raises(TesseraError, match="--from names where transfer-tuning takes schedules from; add --transfer"):
        command("submit", grouped, "--from", str(tuning), "--store", db)
    with pytest.raises(TesseraError, match="no such tuning folder or results store"):
        command("submit", grouped, "--transfer", "--from", str(tmp_path / "missing"), "--store", db)
    with pytest.raises(TesseraError, match="--transfer reuses schedules instead"):
        command("submit", grouped, "--transfer", "--tune-trials", "3", "--store", db)


def test_results_table_json_and_pareto(tmp_path, examples_dir, capsys):
    db = tmp_path / "cli.db"
    with Store(db) as store:
        for name, latency, flops in [("conv2d", 3.0, 9e9), ("grouped_conv", 1.0, 5e9), ("shift_conv", 2.0, 6e9)]:
            op = store.add_operator(read_document(examples_dir / f"{name}.json"), name)
            store.add_measurement(op, None, {"latency_ms": latency, "flops": flops, "bindings": {"C_in": 64}})
    assert command("results", "--store", str(db)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:5] == ["id", "operator", "device", "bindings", "latency_ms"]
    assert out[1].split()[:5] == ["1", "conv2d", "-", "C_in=64", "3"]
    assert command("results", "--pareto", "latency_ms,flops", "--json", "--store", str(db)) == 0
    front = json.loads(capsys.readouterr().out)
    assert [(r["operator_name"], r["bindings"]) for r in front] == [("grouped_conv", {"C_in": 64})]
    assert command("results", "--pareto", "latency_ms,flops:max", "--store", str(db)) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]] == [
        "grouped_conv",
        "shift_conv",
        "conv2d",
    ]
    with pytest.raises(TesseraError, match="direction after ':' must be min or max"):
        command("results", "--pareto", "latency_ms:fast,flops", "--store", str(db))


def test_results_variants_compares_one_operator_device_and_sizes(tmp_path, examples_dir, capsys):
    db = str(tmp_path / "cli.db")
    ids = add_variants(db, examples_dir)
    assert command("results", "--variants", str(ids[3]), "--store", db) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "grouped_conv at C_in=16, G=4 on local: 4 measurement(s), vs default · untuned"
    assert lines[1].split()[:3] == ["id", "variant", "layout"]
    rows = [line.split("  ") for line in lines[2:]]
    assert [[c.strip() for c in r if c.strip()][1] for r in rows] == [
        "gspc · tuned (8 trials)",
        "default · reused schedule",
        "gspc · untuned",
        "default · untuned",
    ]
    assert lines[2].split()[-2:] == ["2.00x", "4.00x"]  # vs PyTorch (2 ms), vs default untuned (4 ms)
    assert command("results", "--variants", str(ids[0]), "--json", "--store", db) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["measurement_id"] for r in report["rows"]] == [ids[1], ids[2], ids[3], ids[0]]
    assert report["rows"][1]["schedule"] == "transfer:local/abc trial 3" and report["rows"][3]["vs_baseline"] == 1
    with pytest.raises(TesseraError, match="there is no measurement 99"):
        command("results", "--variants", "99", "--store", db)


def test_empty_store(tmp_path, capsys):
    assert command("results", "--store", str(tmp_path / "empty.db")) == 0
    assert capsys.readouterr().out == "no results yet\n"
    assert command("worker", "--n", "1", "--store", str(tmp_path / "empty.db")) == 0
    assert "1 worker(s) on" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.tvm
def test_submitted_measurement_survives_a_killed_worker_and_lands_in_results(tmp_path, examples_dir, capsys):
    """The real measure handler (TVM build, torch reference) on a job made by `tessera submit`;
    its first worker is SIGKILLed mid-job, the retry's measurement reaches `tessera results`."""
    db = str(tmp_path / "tvm.db")
    assert command("submit", str(examples_dir / "conv2d.json"), "--bind", "C_in=8,C_out=8,H=8,W=8", "--store", db) == 0
    job, _ = check_worker_killed_mid_job(db, 1, handlers(), started=lambda job: (job.progress or 0) > 0)
    with Store(db) as store:
        [row] = store.results()
    assert row["job_id"] == 1 and row["latency_ms"] == job.result["latency_ms"] > 0 and row["flops"] > 0
    assert row["speedup_low"] <= row["speedup"] <= row["speedup_high"]  # the median of paired rounds
    assert json.loads(row["bindings"])["C_in"] == 8 and row["device_name"] == "local"
    with closing(sqlite3.connect(db)) as conn:  # each side's thread count is kept
        kept = conn.execute("SELECT threads, torch_threads FROM measurements").fetchone()
    assert kept == (job.result["threads"], job.result["torch_threads"]) and min(kept) >= 1
    capsys.readouterr()
    assert command("results", "--store", db) == 0
    row_id, name, device, bindings = capsys.readouterr().out.splitlines()[1].split()[:4]
    assert (row_id, name, device) == ("1", "conv2d", "local") and "C_in=8" in bindings.split(",")
