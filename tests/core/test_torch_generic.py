"""The shape-generic torch module: one class, made at any sizes the operator takes, computes
what the module generated at those sizes computes; sizes that do not divide, or that the code
was not generated for, are refused when the module is made, naming what would work."""

from __future__ import annotations

import pytest
import torch

from core.codegen.to_torch import compiled_class, module_class
from core.codegen.torch_generic import generic_source
from core.ir.serialize import load_operator
from tests.support import EXAMPLES

# sizes other than the files' (64 channels, 56 px, g=32, s=2): channels that differ, odd sides, K=1
SIZES = [
    {"C_in": 16, "C_out": 24, "H": 9, "W": 13, "K": 3, "G": 4, "g": 4, "s": 2},
    {"C_in": 32, "C_out": 16, "H": 7, "W": 5, "K": 1, "G": 8, "g": 8, "s": 2},
]


@pytest.mark.parametrize("example", sorted(p.stem for p in EXAMPLES.glob("*.json")))
def test_one_class_computes_what_the_operator_computes_at_every_size(example):
    graph = load_operator(EXAMPLES / f"{example}.json")
    cls = compiled_class(generic_source(graph, "Op"), "Op")
    variables = graph.mentioned_variables()
    for sizes in SIZES:
        sizes = {k: v for k, v in sizes.items() if k in variables}
        torch.manual_seed(0)
        reference = module_class(graph, sizes)().double()
        arguments = {"in_channels": sizes["C_in"], "out_channels": sizes.get("C_out")}
        arguments.update({k: v for k, v in sizes.items() if k not in ("C_in", "C_out", "H", "W", "K")})
        module = cls(**arguments, **({"kernel_size": sizes["K"]} if "K" in sizes else {})).double()
        module.load_state_dict(reference.state_dict())
        x = torch.randn(2, sizes["C_in"], sizes["H"], sizes["W"], dtype=torch.float64)
        with torch.no_grad():
            torch.testing.assert_close(module(x), reference(x), atol=1e-10, rtol=1e-10)


def test_sizes_the_operator_does_not_take_are_refused_naming_what_would_work():
    syno = compiled_class(generic_source(load_operator(EXAMPLES / "syno_operator1.json"), "Syno"), "Syno")
    with pytest.raises(ValueError, match="C_out/g/s") as refused:
        syno(64, 96)  # g=32, s=2: C_out/(g*s) = 96/64
    assert str(refused.value) == (
        "Syno(C_in=64, C_out=96, K=3, g=32, s=2, stride=1): C_out/g/s = 96/64 is not a whole number; "
        "it is with C_out=64 or C_out=128, or with g=24 or g=48, or with s=1 or s=3 (the rest as given)"
    )
    conv = compiled_class(generic_source(load_operator(EXAMPLES / "conv2d.json"), "Conv"), "Conv")
    with pytest.raises(
        ValueError, match=r"Conv\(C_in=8, C_out=8, K=4, stride=1\): this operator's code needs K % 2 != 0"
    ):
        conv(8, 8, kernel_size=4)  # an even window is read differently: the code is for odd ones
    with pytest.raises(ValueError, match=r"takes \[N, 8, H, W\], not \[1, 3, 5, 5\]"):
        conv(8, 8)(torch.randn(1, 3, 5, 5))
    assert conv(8, 8, stride=2)(torch.randn(1, 8, 9, 6)).shape == (1, 8, 5, 3)  # every other row and column


def test_the_module_traces_and_its_weights_save_and_load(tmp_path):
    cls = compiled_class(generic_source(load_operator(EXAMPLES / "involution.json"), "Involution"), "Involution")
    module, x = cls(16, kernel_size=3, G=4), torch.randn(2, 16, 12, 10)
    with pytest.warns(torch.jit.TracerWarning):  # the input check is traced as a constant, as it should be
        traced = torch.jit.trace(module, x)
    torch.testing.assert_close(traced(x), module(x))
    torch.save(module.state_dict(), tmp_path / "w.pt")
    again = cls(16, kernel_size=3, G=4)
    again.load_state_dict(torch.load(tmp_path / "w.pt", weights_only=True))
    torch.testing.assert_close(again(x), module(x))
