"""Measuring with algorithm "gspc": a real GSPC build checked against the torch module and
labelled for the store, its tile grid as tuning, the variants helper, the errors of a bad
request, and `tessera measure --algorithm gspc / --variants` as a user runs it."""

from __future__ import annotations

import json

import pytest

from core.codegen.gspc_schedule import TileError
from core.compile.errors import CompileError
from core.compile.handlers import measure_job
from core.compile.kernels.gspc import GRID_FILE, GspcKernel
from core.compile.kernels.protocol import make_kernel
from core.compile.measure import measure_operator
from core.compile.payloads import MeasurePayload
from core.compile.place import ThisMachine
from core.compile.requests import variant_payloads
from core.compile.settings import Settings
from core.compile.target import local_target
from core.compile.workload import Workload
from core.ir.serialize import graph_from_document, load_operator
from core.jobs.errors import PayloadError
from core.store.measurement import Measurement
from core.store.records import measurement_row
from tests.support import EXAMPLES, Ctx, tessera

pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("restore_threads")]

TINY = {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "K": 3, "G": 2}  # K_PG = C_PG = 4
QUICK = {"repeat": 3, "min_repeat_ms": 5}


def _payload(name: str = "grouped_conv", **extra) -> dict:
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    return {"operator": document, "bindings": TINY, "tune_trials": 0, "device": "local", **QUICK, **extra}


def test_gspc_measurement_is_checked_and_labelled_for_the_store():
    result = measure_job(_payload(algorithm="gspc", batch=2, tiles=[2, 4]), Ctx()).to_dict()
    json.dumps(result)
    assert result["max_abs_error"] < 1e-4 and result["latency_ms"] > 0 and result["torch_latency_ms"] > 0
    assert result["algorithm"] == "gspc" and result["layout"] == "NCHW (packed T_O=2,T_I=4)"
    assert result["schedule_source"] == "untuned" and result["tuned"] is False and result["trials"] == []
    details = result["algorithm_details"]
    assert details["convolution"] == "conv 8->8, 3x3, stride 1, padding 1, groups 2"
    assert (details["tiles"]["T_O"], details["tiles"]["T_I"]) == (2, 4) and details["tiles"]["columns"] >= 1
    row, _ = measurement_row(Measurement.from_dict(result))
    assert (row["algorithm"], row["layout"], row["schedule_source"]) == ("gspc", "NCHW (packed T_O=2,T_I=4)", "untuned")


def test_the_kernel_comes_from_the_settings_algorithm():
    workload = Workload.prepare(load_operator(EXAMPLES / "conv2d.json"), {"C_in": 4, "C_out": 4, "H": 5, "W": 5}, 1, 0)
    place = ThisMachine(local_target(1))
    settings = Settings(algorithm="gspc", repeat=2, min_repeat_ms=1)
    kernel = make_kernel(workload, place, settings)
    assert isinstance(kernel, GspcKernel)
    result = measure_operator(workload, kernel, place, settings)
    assert result.algorithm == "gspc" and result.max_abs_error is not None and result.max_abs_error < 1e-4
    assert result.algorithm_details["convolution"].endswith("groups 1") and result.layout.startswith("NCHW (packed")


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"algorithm": "spatial_pack"}, CompileError, "unknown algorithm 'spatial_pack' .*default or gspc"),
        ({"tiles": [4, 4]}, CompileError, "tile sizes .* apply to algorithm 'gspc' only, not 'default'"),
        ({"algorithm": "gspc", "tiles": [3, 4]}, TileError, "T_O=3 must be a positive divisor of the 4 output"),
        ({"algorithm": "gspc", "tiles": [4]}, PayloadError, r"tiles must be a list of 2 items, each a whole number"),
        ({"algorithm": "gspc", "tiles": [4, 0]}, CompileError, r"tiles must be two positive integers \[T_O, T_I\]"),
    ],
)
def test_bad_algorithm_requests_are_clear_errors(change, error, message):
    with pytest.raises(error, match=message):
        measure_job(_payload(**change), Ctx())


def test_gspc_refuses_an_operator_that_is_not_a_grouped_convolution_naming_its_node():
    payload = _payload("involution", algorithm="gspc", bindings={})
    with pytest.raises(
        CompileError,
        match="algorithm 'gspc' runs grouped convolutions only: involution is not "
        "a 2-D convolution: group kernel_groups is not part of a convolution",
    ):
        measure_job(payload, Ctx())


def test_gspc_refuses_a_gpu_target():
    import tvm

    workload = Workload.prepare(load_operator(EXAMPLES / "grouped_conv.json"), TINY, 1, 0)
    gpu = ThisMachine(tvm.target.Target({"kind": "cuda"}))  # only its target is asked
    with pytest.raises(CompileError, match="'gspc' has a CPU schedule .* target is 'cuda'"):
        GspcKernel(workload, gpu, Settings(algorithm="gspc"))


def _variants(payload: dict):
    return variant_payloads(MeasurePayload.from_dict(payload), graph_from_document(payload["operator"]))


def test_variant_payloads_cover_algorithms_and_tuning():
    payloads, skipped = _variants(_payload(tune_trials=8, tiles=[4, 4]))
    assert skipped.startswith("algorithm 'separable' runs depthwise-separable convolutions only: grouped_conv")
    algorithms = ["default", "gspc", "nchwc", "im2col", "winograd"]  # not auto: it chooses among them
    assert [(p.algorithm, p.tune_trials) for p in payloads] == [(a, n) for a in algorithms for n in (0, 8)]
    assert [p.tiles for p in payloads] == [None, None, (4, 4), (4, 4), *[None] * 6]
    payloads, skipped = _variants(_payload("shift_conv", bindings={}))
    assert [(p.algorithm, p.tune_trials) for p in payloads] == [("default", 0)]
    assert "'gspc' runs grouped convolutions only: shift_conv is not a 2-D convolution: shift shift_h" in skipped


@pytest.mark.slow
def test_tuning_gspc_measures_a_tile_grid_that_a_second_run_reuses(tmp_path):
    ctx = Ctx()
    payload = _payload(algorithm="gspc", tune_trials=3, tuning_root=str(tmp_path))
    first = measure_job(payload, ctx).to_dict()
    assert first["tuned"] is True and first["schedule_source"] == "tuned"
    assert first["trial_count"] == 3 and first["new_trials"] == 3 and len(first["trials"]) == 3
    assert first["best_trial_ms"] == min(ms for _, ms in first["trials"])
    assert first["max_abs_error"] < 1e-4 and first["layout"].startswith("NCHW (packed T_O=")
    assert any("GSPC tile grid: 3 of 3" in message for _, message in ctx.seen)
    grid = json.loads((tmp_path.glob(f"local/*/{GRID_FILE}").__next__()).read_text())
    assert len(grid) == 3
    again = measure_job({**payload, "tune_trials": 2}, Ctx()).to_dict()
    assert again["new_trials"] == 0 and again["trial_count"] == 2


@pytest.mark.slow
def test_the_gspc_tile_grid_is_timed_on_an_rpc_device(rpc_cluster, tmp_path):
    """Grid points are built here and timed on the device's servers, a session each."""
    payload = _payload(
        algorithm="gspc", device="loop", device_config=rpc_cluster.device(), tune_trials=2, tuning_root=str(tmp_path)
    )
    tuned = measure_job(payload, Ctx()).to_dict()
    assert tuned["tuned"] is True and len(tuned["trials"]) == 2 and tuned["max_abs_error"] < 1e-4
    assert '"num-cores":1' in tuned["target"] and tuned["torch_latency_ms"] is None
    assert list(tmp_path.glob(f"loop/*/{GRID_FILE}"))  # the device's own records


def test_cli_measure_with_gspc_and_variants():
    out = tessera(
        "measure",
        str(EXAMPLES / "grouped_conv.json"),
        "--algorithm",
        "gspc",
        "--tiles",
        "4,2",
        "--bind",
        "C_in=8,C_out=8,H=6,W=6,G=2",
        "--repeat",
        "3",
        "--min-repeat-ms",
        "5",
    )
    assert out.returncode == 0, out.stderr
    assert "algorithm gspc, layout NCHW (packed T_O=4,T_I=2), schedule untuned" in out.stdout

    bad = tessera("measure", str(EXAMPLES / "involution.json"), "--algorithm", "gspc")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "runs grouped convolutions only: involution is not a 2-D convolution" in bad.stderr

    table = tessera(
        "measure",
        str(EXAMPLES / "grouped_conv.json"),
        "--variants",
        "--bind",
        "C_in=8,C_out=8,H=6,W=6,G=2",
        "--repeat",
        "2",
        "--min-repeat-ms",
        "2",
    )
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[1].split()[:2] == ["variant", "layout"]
    assert [line.split()[:2] for line in lines[2:4]] == [["default", "untuned"], ["gspc", "untuned"]]
    assert "NCHW (packed T_O=4,T_I=4)" in lines[3] and lines[2].endswith("1.00x")
    assert "pass --tune-trials N to add the tuned variants" in table.stdout
    fastest = min(lines[2:7], key=lambda line: float(line.split()[-8]))  # fastest ms (before std, GFLOP/s, threads...)
    assert f"auto would keep: {' '.join(fastest.split()[:2])} (the fastest here)" in table.stdout
