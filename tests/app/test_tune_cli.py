"""`tessera tune`: transfer-tuning run as a job whose result is a measurement, a backbone's
kernels reported, bad requests refused."""

from __future__ import annotations

import json

import pytest

from app.cli.tune import _transfer_report
from core.compile.transfer_records import tuned_kernels
from core.compile.transfer_sources import open_source
from core.store import Store
from tests.support import EXAMPLES, TINY_NETWORK, tessera

pytestmark = [pytest.mark.tvm, pytest.mark.slow]

CONV = EXAMPLES / "conv2d.json"
OTHER = {"C_in": 8, "C_out": 6, "H": 10, "W": 6, "K": 3}  # the same class at other sizes


def test_cli_tune_transfer_runs_a_job_whose_result_is_a_measurement(tuned_root, tmp_path):
    store = tmp_path / "results.db"
    out = tessera(
        "tune",
        str(CONV),
        "--bind",
        "C_in=8,C_out=6,H=10,W=6",
        "--transfer",
        "--from",
        str(tuned_root),
        "--top-k",
        "2",
        "--store",
        str(store),
        "--repeat",
        "3",
        "--min-repeat-ms",
        "5",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    found = min(2, len(tuned_kernels(open_source(tuned_root).folders)[0].trials))  # top 2 of the tuned kernel
    transfer = result["transfer"]
    assert transfer["found"] == transfer["applied"] == found and transfer["skipped"] == 0
    names = [c["schedule"] for c in result["transfer"]["candidates"]]
    assert all(name.startswith("local/") and " trial " in name for name in names)
    if result["tuned"]:  # the fastest reused schedule, when it beat the untuned default
        assert result["schedule_source"] in {f"transfer:{name}" for name in names}
    else:
        assert result["schedule_source"] == "untuned"
    assert result["max_abs_error"] < 1e-4 and result["latency_ms"] > 0
    with Store(store) as s:
        (row,) = [r for r in s.results() if r["measurement_id"] is not None]
    assert row["schedule_source"] == result["schedule_source"] and row["latency_ms"] == result["latency_ms"]

    text = _transfer_report("conv2d.json", result)  # what the command prints without --json
    assert "kernel class " in text and f"{found} tuned schedules found, {found} applied, 0 skipped" in text
    assert f"kept: {result['schedule_source'] if result['tuned'] else 'the untuned default'}" in text


def test_cli_tune_refuses_bad_requests_clearly(tmp_path):
    for args, message in [
        ((), "give an operator FILE or --backbone NAME"),
        ((str(CONV), "--transfer", "--trials", "8"), "--trials sets the budget"),
        ((str(CONV), "--from", str(tmp_path)), "add --transfer"),
        ((str(CONV), "--transfer", "--from", str(tmp_path / "none")), "no such tuning folder"),
        (("--backbone", "resnet18", "--store", str(tmp_path / "r.db")), "apply to an operator"),
        (("--backbone", "resnet18", "--device", "board"), "apply to an operator"),
        (
            (str(CONV), "--transfer", "--device", "board", "--store", str(tmp_path / "r.db")),
            "there is no device called 'board'",
        ),
    ]:
        out = tessera("tune", *args)
        assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr, args


def test_cli_tune_transfer_on_a_backbone_reports_every_kernel(tuned_root):
    out = tessera(
        "tune",
        *TINY_NETWORK,
        "--only",
        "conv2d",
        "--transfer",
        "--from",
        str(tuned_root),
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "vgg/w4 at 8x8: 6 kernels" and lines[1].split()[:3] == ["kernel", "calls", "untuned"]
    assert sum(line.startswith("conv2d") for line in lines) == 6
    # the operator's conv2d and relax's conv2d are different classes (other blocks): nothing to reuse
    assert "0 schedules found, 0 applied, 0 skipped" in out.stdout and "1.00x" in out.stdout
