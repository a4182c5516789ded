"""Syno's Operator 1 and 2 as example files: they validate, compute exactly the artifact's formula,
compile with TVM, train inside a backbone and export."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from app.cli import main
from core.analysis.summary import summarize
from core.codegen.to_torch import build_module
from core.data.backbones import build_backbone
from core.data.datasets import load_dataset, split_dataset
from core.data.specs import BackboneSpec
from core.data.swap_convs import replace_convs
from core.ir.serialize import load_operator
from core.train.proxy import TrainConfig, train_proxy
from tests.support import EXAMPLES

OPERATORS = ("syno_operator1", "syno_operator2")
#: small sizes with every axis longer than 1 (C_out/(g*s) = 2)
SMALL = {"C_in": 8, "C_out": 16, "H": 5, "W": 6, "K": 3, "g": 4, "s": 2}


def _artifact_formula(name: str, x: torch.Tensor, module: torch.nn.Module) -> torch.Tensor:
    """The operator as the artifact writes it (kernels.py / loop.txt), with the weights reindexed
    from Tessera's layout to the artifact's: W2 [C_in, k, c], W1 [g, k, k, C_out, c] (Operator 1)
    or [C_out, g, k, c] (Operator 2)."""
    g, s, k = SMALL["g"], SMALL["s"], SMALL["K"]
    c_in, c_out = x.shape[1], SMALL["C_out"]
    w2 = module.w_share_w2.detach()  # [c, g, C_in/g, K]
    w2 = w2.permute(1, 2, 3, 0).reshape(c_in, k, c_out // g // s)
    pad = F.pad(x, (1, 1, 1, 1))
    n, _, h, w = x.shape
    windows = pad.unfold(2, k, 1).unfold(3, k, 1)  # [n, C_in, h, w, kh, kw]
    if name == "syno_operator1":
        w1 = module.w_share_w1.detach()  # [C_out, c, g, K_w, K_h]
        w1 = w1.permute(2, 4, 3, 0, 1)  # [g, kh, kw, C_out, c]
        xg = windows.reshape(n, g, c_in // g, h, w, k, k)
        w2g = w2.reshape(g, c_in // g, k, -1)
        return torch.einsum("ngiyxab,gabot,gibt->noyx", xg, w1, w2g)
    # Operator 2: the H window reads row (h + kh - K//2 + 1) mod H, padding decided before the shift
    w1 = module.w_share_w1.detach().permute(0, 2, 3, 1)  # [C_out, g, K, c]
    rows = torch.arange(h).view(h, 1) + torch.arange(k).view(1, k) - k // 2  # [h, kh]
    inside = (rows >= 0) & (rows < h)
    shifted = torch.where(inside, (rows + 1) % h, 0)
    wpad = F.pad(x, (1, 1)).unfold(3, k, 1)  # [n, C_in, h, w, kw]
    taps = wpad[:, :, shifted] * inside.view(1, 1, h, k, 1, 1)  # [n, C_in, h, kh, w, kw]
    xg = taps.reshape(n, g, c_in // g, h, k, w, k)
    w2g = w2.reshape(g, c_in // g, k, -1)
    return torch.einsum("ngiyaxb,ogat,gibt->noyx", xg, w1, w2g)


@pytest.mark.parametrize("name", OPERATORS)
def test_the_file_validates_and_says_what_is_known_and_inferred(name):
    graph = load_operator(EXAMPLES / f"{name}.json")
    s = summarize(graph)
    assert s.ok and s.shapes.solved, s.messages()
    assert sum(p.op == "share" for p in map(graph.prim, graph.primitive_nodes())) == 2  # two weights
    notes = " ".join(graph.notes)
    assert "Yongqi-Zhuo/Syno-AE" in notes and "Known" in notes
    if name == "syno_operator2":
        assert "Inferred" in notes and "07754_18091915762600937904" in notes
    conv = summarize(load_operator(EXAMPLES / "conv2d.json"), graph.bindings).numeric_cost
    ratio = s.numeric_cost["params"] / conv["params"]
    assert ratio < 0.25 if name == "syno_operator2" else 0.25 < ratio < 0.55
    assert main(["validate", str(EXAMPLES / f"{name}.json")]) == 0


@pytest.mark.parametrize("name", OPERATORS)
def test_the_operator_computes_the_artifacts_formula(name):
    graph = load_operator(EXAMPLES / f"{name}.json")
    torch.manual_seed(0)
    module = build_module(graph, SMALL)
    x = torch.randn(2, SMALL["C_in"], SMALL["H"], SMALL["W"])
    with torch.no_grad():
        torch.testing.assert_close(module(x), _artifact_formula(name, x, module), rtol=1e-4, atol=1e-5)


@pytest.mark.tvm
@pytest.mark.parametrize("name", OPERATORS)
def test_tvm_compiles_the_operator_in_two_contractions(name):
    from tests.core.tvm_checks import assert_same, blocks, run_both

    got, want, script = run_both(load_operator(EXAMPLES / f"{name}.json"), SMALL)
    assert_same(got, want)
    assert {"share_w2", "share_w1"} <= set(blocks(script))  # one reduction stage per weight


@pytest.mark.slow
@pytest.mark.parametrize("name", OPERATORS)
def test_the_operator_trains_inside_a_backbone_and_exports(name, tmp_path):
    """At the file's own coefficients (g = 32, s = 2): every conv of a width-64 VGG is replaced."""
    torch.manual_seed(0)
    graph = load_operator(EXAMPLES / f"{name}.json")
    net = build_backbone(BackboneSpec("vgg", 64, 8), 10, seed=0)
    report = replace_convs(net, graph, 8)
    assert report.replaced and len(report.replaced) == len(report.layers) - 1  # all but the 3-channel stem
    data = split_dataset(load_dataset("digits", 8), 0.2, seed=0, limit=128)
    result = train_proxy(net, data, TrainConfig(epochs=1, batch_size=32, max_batches=3))
    assert len(result.accuracy_per_epoch) == 1 and 0.0 <= result.accuracy <= 1.0
    out = tmp_path / f"{name}.py"
    assert main(["export", str(EXAMPLES / f"{name}.json"), "--format", "torch", "--out", str(out)]) == 0
    namespace: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)  # our own export, read back as a user would
    cls = next(v for k, v in namespace.items() if isinstance(v, type) and k.startswith("Syno"))
    assert cls(64, 64)(torch.randn(1, 64, 56, 56)).shape == (1, 64, 56, 56)
    assert cls(128, 64, g=16)(torch.randn(1, 128, 20, 24)).shape == (1, 64, 20, 24)  # shape-generic
