"""TVM exports: TVMScript that TVM reads back, and a compiled library that a fresh process
reloads with tvm.runtime.load_module and runs, matching the torch module on the same
weights (given by the torch module's state_dict names); a tuned operator's library holds
its tuned schedule."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from core.codegen import build_module
from core.export import from_file, torch_source, write_text
from core.jobs.isolate import call_in_subprocess
from tests.support import EXAMPLES, QUICK, tessera

pytestmark = pytest.mark.tvm

SMALL = {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "K": 3, "G": 2}


def _reference(example: str, bindings: dict, tmp_path):
    """Tessera's torch module on random weights: saves weights and input for the child, returns its output."""
    item = from_file(EXAMPLES / f"{example}.json", bindings)
    torch.manual_seed(2)
    module = build_module(item.graph).eval()
    x = torch.randn(1, bindings["C_in"], bindings["H"], bindings["W"])
    np.savez(tmp_path / "inputs.npz", x=x.numpy(), **{k: v.numpy() for k, v in module.state_dict().items()})
    with torch.no_grad():
        return module(x).numpy()


def _run_loader(folder, loader_module: str) -> np.ndarray:
    child = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {str(folder)!r})
        from {loader_module} import load
        data = dict(np.load("inputs.npz"))
        x = data.pop("x")
        np.save("y.npy", load()(x, data))
    """)
    run = subprocess.run([sys.executable, "-c", child], cwd=folder, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return np.load(folder / "y.npy")


def test_a_library_from_the_cli_reloads_in_a_fresh_process_and_matches_torch(tmp_path):
    reference = _reference("gated_separable", SMALL, tmp_path)  # two weights: their order is checked by name
    out = tessera(
        "export",
        str(EXAMPLES / "gated_separable.json"),
        "--format",
        "library",
        "--out",
        f"{tmp_path}/",
        "--bind",
        ",".join(f"{k}={v}" for k, v in SMALL.items()),
        "--tuning-dir",
        str(tmp_path / "tuning"),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == [
        f"wrote {tmp_path}/gated_separable.so",
        f"wrote {tmp_path}/gated_separable_loader.py",
    ]
    assert "has not been tuned on this machine" in out.stderr
    assert not (tmp_path / "tuning").exists()  # looking for a schedule never creates a database
    np.testing.assert_allclose(_run_loader(tmp_path, "gated_separable_loader"), reference, atol=1e-5, rtol=1e-5)
    demo = subprocess.run(
        [sys.executable, str(tmp_path / "gated_separable_loader.py")], capture_output=True, text=True, timeout=300
    )
    assert demo.returncode == 0 and demo.stdout.startswith("output (1, 8, 6, 6) in "), demo.stderr


def test_tvmscript_is_a_file_that_runs_and_matches_the_torch_module(tmp_path, monkeypatch):
    import tvm

    out = tessera(
        "export",
        str(EXAMPLES / "conv2d.json"),
        "--format",
        "tvmscript",
        "--out",
        str(tmp_path / "c.py"),
        "--bind",
        "C_in=4,C_out=4,H=8,W=8,K=3",
        "--batch",
        "2",
    )
    assert out.returncode == 0, out.stderr
    spec = importlib.util.spec_from_file_location("exported_tvmscript", tmp_path / "c.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "exported_tvmscript", script)  # TVM's parser reads the source through it
    spec.loader.exec_module(script)  # the file is Python: TVMScript under its live imports
    assert isinstance(script.Module, tvm.IRModule)
    params = script.Module["main"].params
    assert [[int(d) for d in p.shape] for p in params] == [[2, 4, 8, 8], [4, 4, 3, 3], [2, 4, 8, 8]]
    run = subprocess.run([sys.executable, "c.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.startswith("main ran: y [2, 4, 8, 8]"), run.stderr
    # its Module computes what the exported torch module computes, on the same weights
    item = from_file(EXAMPLES / "conv2d.json", {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3})
    write_text(tmp_path / "c_torch.py", torch_source(item))
    spec = importlib.util.spec_from_file_location("c_torch", tmp_path / "c_torch.py")
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)
    torch.manual_seed(3)
    op, x = exported.Conv2d(4, 4, kernel_size=3).eval(), torch.randn(2, 4, 8, 8)
    np.savez(tmp_path / "inputs.npz", x=x.numpy(), w=op.w_share.detach().numpy())
    child = textwrap.dedent("""
        import numpy as np, tvm
        from c import Module
        data = np.load("inputs.npz")
        y = tvm.runtime.empty((2, 4, 8, 8), "float32", tvm.cpu())
        tvm.compile(Module, target="llvm")["main"](tvm.runtime.tensor(data["x"]), tvm.runtime.tensor(data["w"]), y)
        np.save("y.npy", y.numpy())
    """)
    run = subprocess.run([sys.executable, "-c", child], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    with torch.no_grad():
        np.testing.assert_allclose(np.load(tmp_path / "y.npy"), op(x).numpy(), atol=1e-6, rtol=1e-6)


@pytest.mark.slow
def test_a_tuned_operator_exports_its_tuned_kernel(tmp_path):
    bindings = {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3}
    payload = {
        "operator": json.loads((EXAMPLES / "conv2d.json").read_text()),
        "bindings": bindings,
        "tune_trials": 2,
        "cost_model": "random",
        "device": "local",
        "tuning_root": str(tmp_path / "tuning"),
        **QUICK,
    }
    measured = call_in_subprocess("core.compile.handlers:measure_call", {"payload": payload})
    assert measured["trial_count"] == 2 and measured["best_trial_ms"] > 0  # the database the export reuses
    reference = _reference("conv2d", bindings, tmp_path)
    out = tessera(
        "export",
        str(EXAMPLES / "conv2d.json"),
        "--format",
        "library",
        "--out",
        str(tmp_path / "k.so"),
        "--bind",
        "C_in=4,C_out=4,H=8,W=8,K=3",
        "--tuning-dir",
        str(tmp_path / "tuning"),
    )
    assert out.returncode == 0, out.stderr
    assert "not been tuned" not in out.stderr
    assert "tuned: the best schedule this machine found" in (tmp_path / "k_loader.py").read_text()
    np.testing.assert_allclose(_run_loader(tmp_path, "k_loader"), reference, atol=1e-5, rtol=1e-5)
