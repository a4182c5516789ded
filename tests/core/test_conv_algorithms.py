"""The convolution algorithms nchwc, im2col and winograd (core.compile.kernels) against
torch.nn.functional.conv2d on sizes that do not fit their blocks and tiles, and their checks
refusing what they cannot run with a message naming the nodes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm

from core.compile.algorithms import algorithm, algorithms_for
from core.compile.errors import CompileError
from core.compile.kernels.protocol import make_kernel
from core.compile.kernels.winograd import transforms
from core.compile.place import ThisMachine
from core.compile.settings import Settings
from core.compile.target import local_target
from core.compile.workload import Workload
from core.ir.serialize import load_operator
from tests.core.test_gspc import strided_w_first
from tests.support import EXAMPLES

pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("restore_threads")]

GROUPED = load_operator(EXAMPLES / "grouped_conv.json")
CASES = {  # name: (graph, bindings); channels 19 and 34 have no block dividing them at 8 or 16 lanes
    "19->34 odd 7x9": (GROUPED, {"C_in": 19, "C_out": 34, "H": 7, "W": 9, "K": 3, "G": 1}),
    "G=2 6->10 9x13": (GROUPED, {"C_in": 6, "C_out": 10, "H": 9, "W": 13, "K": 3, "G": 2}),
    "depthwise 5x7": (GROUPED, {"C_in": 6, "C_out": 6, "H": 5, "W": 7, "K": 3, "G": 6}),
    "depthwise 19 9x11": (GROUPED, {"C_in": 19, "C_out": 19, "H": 9, "W": 11, "K": 3, "G": 19}),
    "5x5 G=1": (GROUPED, {"C_in": 3, "C_out": 5, "H": 7, "W": 6, "K": 5, "G": 1}),
    "stride 2, 3x5, G=4": (
        strided_w_first(),
        {"C_in": 8, "C_out": 20, "H": 10, "W": 14, "Kh": 3, "Kw": 5, "G": 4, "s": 2},
    ),
    "depthwise stride 2, 3x5": (
        strided_w_first(),
        {"C_in": 18, "C_out": 18, "H": 10, "W": 14, "Kh": 3, "Kw": 5, "G": 18, "s": 2},
    ),
}
RUNS = {
    "nchwc": list(CASES),
    "im2col": list(CASES),
    "winograd": ["19->34 odd 7x9", "G=2 6->10 9x13", "depthwise 5x7", "depthwise 19 9x11"],
}


@pytest.mark.parametrize(
    "name, case", [(name, case) for name, cases in RUNS.items() for case in cases], ids=lambda v: str(v)
)
def test_the_kernel_matches_torch_conv2d(name, case):
    graph, bindings = CASES[case]
    workload = Workload.prepare(graph, bindings, 2, 0)
    kernel = make_kernel(workload, ThisMachine(local_target(1)), Settings(algorithm=name))
    variant = kernel.untuned()
    tvm.compile(variant.module, target=local_target(1))["main"](*variant.arguments)
    conv = kernel.conv
    spec = conv.spec
    weight = torch.from_numpy(conv.torch_weight(workload.weight(conv.weight)))
    expected = F.conv2d(workload.x, weight, stride=spec.stride, padding=spec.padding, groups=spec.groups).numpy()
    np.testing.assert_allclose(variant.arguments[-1].numpy(), expected, rtol=1e-4, atol=1e-4)
    assert variant.algorithm == name and variant.details["convolution"] == spec.describe()


def test_the_blocks_and_tiles_are_said_in_the_result():
    place = ThisMachine(local_target(1))
    odd = Workload.prepare(*CASES["19->34 odd 7x9"], 1, 0)
    lanes = make_kernel(odd, place, Settings(algorithm="nchwc")).lanes
    nchwc = make_kernel(odd, place, Settings(algorithm="nchwc")).untuned()
    assert nchwc.details["blocks"] == {"input": lanes, "output": lanes}  # 19 and 34 padded to whole blocks
    assert nchwc.layout == f"NCHW{lanes}c (weights OIHW{lanes}i{lanes}o)"
    winograd = make_kernel(odd, place, Settings(algorithm="winograd")).untuned()
    assert winograd.details["tile"] == "F(2x2,3x3)"
    assert "T.parallel" in winograd.module.script() and "T.vectorized" in winograd.module.script()  # its own schedule
    large = Workload.prepare(*CASES["G=2 6->10 9x13"], 1, 0)
    assert make_kernel(large, place, Settings(algorithm="winograd")).untuned().details["tile"] == "F(4x4,3x3)"


@pytest.mark.parametrize("m", [2, 4])
def test_the_winograd_transforms_compute_a_correlation(m):
    a, b, g = transforms(m)
    rng = np.random.default_rng(0)
    d, w = rng.standard_normal(m + 2), rng.standard_normal(3)
    np.testing.assert_allclose(a.T @ ((g @ w) * (b.T @ d)), np.correlate(d, w, "valid"), atol=1e-12)


@pytest.mark.parametrize("name", ["nchwc", "im2col", "winograd"])
def test_an_operator_that_is_not_a_convolution_is_refused_naming_its_node(name):
    graph = load_operator(EXAMPLES / "involution.json")
    with pytest.raises(
        CompileError,
        match=f"algorithm '{name}' runs .*convolutions only: involution is not a 2-D convolution: "
        "group kernel_groups is not part of a convolution",
    ):
        algorithm(name).check(graph, graph.bindings)


@pytest.mark.parametrize("case", ["5x5 G=1", "stride 2, 3x5, G=4"])
def test_winograd_refuses_other_windows_and_strides_naming_the_nodes(case):
    graph, bindings = CASES[case]
    with pytest.raises(CompileError, match="'winograd' runs 3x3 stride-1 convolutions only: .*(unfold|fc) .*"):
        algorithm("winograd").check(graph, bindings)
    runs, refused = algorithms_for(graph, bindings)
    assert runs == ["default", "gspc", "nchwc", "im2col"] and "3x3 window at stride 1" in refused[0]
