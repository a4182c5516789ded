"""The fused depthwise-separable kernel (core.compile.kernels.separable) against torch's depthwise
then 1x1 conv2d on sizes that fit none of its blocks, its tile grid, and the matcher it relies on
(core.codegen.conv_spec.match_separable) taking depthwise-then-pointwise graphs and refusing
near-misses by name."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm

from core.codegen.conv_spec import NotAConvolution, match_separable
from core.compile.algorithms import algorithms_for
from core.compile.kernels.protocol import make_kernel
from core.compile.kernels.separable import GRID_FILE, Blocks
from core.compile.place import ThisMachine
from core.compile.settings import Settings
from core.compile.target import local_target
from core.compile.workload import Workload
from core.ir.serialize import load_operator
from tests.support import CONV_KINDS, EXAMPLES, chain

pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("restore_threads")]

SEPARABLE = load_operator(EXAMPLES / "depthwise_separable.json")


def strided(contraction=("fc", {"out": "C_out", "groups": "1"})):
    """unfold W before H (a 3x5 window read as kw, kh), a stride on H before the depthwise fc and
    one on W after it, then the pointwise contraction (an fc, or a share with its reduce)."""
    op, params = contraction
    steps = [
        ("uw", "unfold", {"dim": -1, "K": "Kw"}, ["input"]),
        ("uh", "unfold", {"dim": -2, "K": "Kh"}, ["uw"]),
        ("sh", "stride", {"dim": -2, "S": "s"}, ["uh"]),
        ("dw", "fc", {"out": "C_in", "groups": "C_in"}, ["sh"]),
        ("sw", "stride", {"dim": -1, "S": "s"}, ["dw"]),
        ("pw", op, params, ["sw"]),
    ]
    if op == "share":
        steps.append(("r", "reduce", {"dim": 1}, ["pw"]))
    return chain(["C_in", "H", "W"], ["C_out", "H/s", "W/s"], steps, variables=CONV_KINDS)


STRIDED = {"C_in": 18, "C_out": 20, "H": 14, "W": 18, "Kh": 3, "Kw": 5, "s": 2}
CASES = {  # 19, 34 and 37 divide into no SIMD width; 7 output channels are one odd block
    "5->7 9x11": (SEPARABLE, {"C_in": 5, "C_out": 7, "H": 9, "W": 11, "K": 3}),
    "19->34 7x37, 5x5": (SEPARABLE, {"C_in": 19, "C_out": 34, "H": 7, "W": 37, "K": 5}),
    "stride 2, 3x5": (strided(), STRIDED),
    "stride 2, share pointwise": (strided(("share", {"dims": [0], "out": "C_out"})), STRIDED),
}


def reference(workload: Workload) -> np.ndarray:
    """torch's depthwise conv2d then its 1x1 conv2d, with the operator's own weights."""
    match = match_separable(workload.graph, workload.bindings)
    d, p = match.depthwise, match.pointwise
    depthwise = torch.from_numpy(d.torch_weight(workload.weight(d.weight)))
    pointwise = torch.from_numpy(p.torch_weight(workload.weight(p.weight)))
    spec = d.spec
    hidden = F.conv2d(workload.x, depthwise, stride=spec.stride, padding=spec.padding, groups=spec.groups)
    return F.conv2d(hidden, pointwise).numpy()


def run(workload: Workload, blocks: Blocks | None = None):
    kernel = make_kernel(workload, ThisMachine(local_target(1)), Settings(algorithm="separable"))
    variant = kernel._variant(blocks, "untuned") if blocks else kernel.untuned()
    tvm.compile(variant.module, target=local_target(1))["main"](*variant.arguments)
    return kernel, variant


@pytest.mark.parametrize("case", list(CASES))
def test_the_kernel_matches_torch_depthwise_then_pointwise(case):
    workload = Workload.prepare(*CASES[case], 2, 0)
    kernel, variant = run(workload)
    expected = reference(workload)
    np.testing.assert_allclose(variant.arguments[-1].numpy(), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(workload.reference, expected, rtol=1e-4, atol=1e-4)  # the reference is torch's
    assert variant.algorithm == "separable" and variant.details["blocks"] == {
        "channels": kernel.blocks.channels,
        "vectors": kernel.blocks.vectors,
        "lanes": kernel.lanes,
    }


def test_every_point_of_the_grid_computes_the_same():
    workload = Workload.prepare(*CASES["19->34 7x37, 5x5"], 1, 0)  # rows of 37: 2 or 3 vectors, the last partial
    kernel, _ = run(workload)
    grid = kernel.grid()
    assert grid[0] == kernel.blocks == Blocks(2, 1) and len(set(grid)) == len(grid)
    most = -(-37 // kernel.lanes)
    assert {(b.channels, b.vectors) for b in grid} == {(c, v) for c in (1, 2) for v in range(1, most + 1)}
    for blocks in grid[1:]:
        _, variant = run(workload, blocks)
        np.testing.assert_allclose(variant.arguments[-1].numpy(), reference(workload), rtol=1e-4, atol=1e-4)


def test_the_default_block_is_four_channels_by_one_vector():
    workload = Workload.prepare(SEPARABLE, {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}, 1, 0)
    kernel = make_kernel(workload, ThisMachine(local_target(1)), Settings(algorithm="separable"))
    assert kernel.blocks == Blocks(4, 1)
    assert all(b.channels * b.vectors <= 24 and 64 % b.channels == 0 for b in kernel.grid())


def test_a_one_by_one_depthwise_window_and_one_column_are_kept_as_loops():
    """Extent-1 loops (a 1x1 window, a single output column) would otherwise vanish from the schedule's loop nest."""
    workload = Workload.prepare(SEPARABLE, {"C_in": 3, "C_out": 4, "H": 5, "W": 1, "K": 1}, 1, 0)
    _, variant = run(workload)
    np.testing.assert_allclose(variant.arguments[-1].numpy(), reference(workload), rtol=1e-4, atol=1e-4)


def test_tuning_times_the_grid_and_a_second_run_reuses_it(tmp_path):
    workload = Workload.prepare(*CASES["19->34 7x37, 5x5"], 1, 0)
    settings = Settings(algorithm="separable", tune_trials=3, work_dir=tmp_path)
    kernel = make_kernel(workload, ThisMachine(local_target(1)), settings)
    seen = []
    tuned = kernel.tune(lambda fraction, message: seen.append(message), lambda: None)
    assert tuned.tuning.new_trials == 3 and len(tuned.tuning.trials) == 3 and (tmp_path / GRID_FILE).exists()
    assert "separable tile grid: 3 of 3" in seen[-1]
    best = tuned.variants[0]
    assert best.source == "tuned" and best.details["blocks"]["channels"] == kernel.blocks.channels
    again = make_kernel(workload, ThisMachine(local_target(1)), settings).tune(lambda *_: None, lambda: None)
    assert again.tuning.new_trials == 0


def test_a_point_timed_with_an_older_schedule_is_timed_again(tmp_path):
    workload = Workload.prepare(*CASES["5->7 9x11"], 1, 0)
    settings = Settings(algorithm="separable", tune_trials=1, work_dir=tmp_path)
    kernel = make_kernel(workload, ThisMachine(local_target(1)), settings)
    stale = f"{kernel.blocks.key()} 000000000000"  # the same blocks, another kernel
    (tmp_path / GRID_FILE).write_text(json.dumps({stale: 1e-6}))
    tuned = kernel.tune(lambda *_: None, lambda: None)
    assert tuned.tuning.new_trials == 1 and tuned.tuning.trials[0][1] != 1e-6
    assert stale in json.loads((tmp_path / GRID_FILE).read_text())  # kept, but no longer read


def test_a_depthwise_separable_operator_is_offered_the_fused_kernel():
    runs, refused = algorithms_for(SEPARABLE, SEPARABLE.bindings)
    assert runs == ["default", "separable"]
    assert all("fc pointwise is a second contraction, after fc depthwise" in why for why in refused)
    match = match_separable(SEPARABLE, SEPARABLE.bindings)
    assert match.depthwise.nodes == ("unfold_h", "unfold_w", "depthwise") and match.pointwise.nodes == ("pointwise",)
    conv = load_operator(EXAMPLES / "conv2d.json")
    assert "separable" not in algorithms_for(conv, conv.bindings)[0]


def _grouped_then_pointwise():
    """A grouped (not depthwise) 3x3 fc, then a pointwise one."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("uw", "unfold", {"dim": -1, "K": "K"}, ["uh"]),
            ("gc", "fc", {"out": "C_in", "groups": "G"}, ["uw"]),
            ("pw", "fc", {"out": "C_out", "groups": "1"}, ["gc"]),
        ],
        variables=CONV_KINDS,
    )


def _depthwise_then(second: str):
    """A depthwise 3x3 followed by a 3x3 conv ('window') or by a grouped 1x1 ('groups')."""
    window = [("u2h", "unfold", {"dim": 1, "K": "K"}, ["dw"]), ("u2w", "unfold", {"dim": -1, "K": "K"}, ["u2h"])]
    after = window if second == "window" else []
    groups = "G" if second == "groups" else "1"
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("uw", "unfold", {"dim": -1, "K": "K"}, ["uh"]),
            ("dw", "fc", {"out": "C_in", "groups": "C_in"}, ["uw"]),
            *after,
            ("pw", "fc", {"out": "C_out", "groups": groups}, [after[-1][0] if after else "dw"]),
        ],
        variables=CONV_KINDS,
    )


def _pointwise_then_depthwise():
    """The two in the other order."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("pw", "fc", {"out": "C_out", "groups": "1"}, ["input"]),
            ("uh", "unfold", {"dim": 1, "K": "K"}, ["pw"]),
            ("uw", "unfold", {"dim": -1, "K": "K"}, ["uh"]),
            ("dw", "fc", {"out": "C_out", "groups": "C_out"}, ["uw"]),
        ],
        variables=CONV_KINDS,
    )


SIZES = {"C_in": 8, "C_out": 12, "H": 6, "W": 7, "K": 3, "G": 2}


@pytest.mark.parametrize(
    "graph, reason",
    [
        (load_operator(EXAMPLES / "grouped_conv.json"), "it has 1 fc or share contractions, not two"),
        (_grouped_then_pointwise(), r"fc gc is a conv 8->8, 3x3, .* groups 2, not depthwise"),
        (_depthwise_then("window"), r"fc pw is a conv 8->12, 3x3, .*, not pointwise"),
        (_depthwise_then("groups"), r"fc pw is a conv 8->12, 1x1, .* groups 2, not pointwise"),
        (_pointwise_then_depthwise(), r"fc pw is a conv 8->12, 1x1, .*, not depthwise"),
        (load_operator(EXAMPLES / "shift_conv.json"), "shift shift_w does not read just the step before it"),
    ],
    ids=["one contraction", "grouped first", "window second", "grouped second", "reversed", "not one chain"],
)
def test_near_misses_are_refused_naming_the_node(graph, reason):
    bindings = {**graph.bindings, **{k: v for k, v in SIZES.items() if k in graph.variables}}
    with pytest.raises(NotAConvolution, match="is not a depthwise convolution followed by a pointwise one: " + reason):
        match_separable(graph, bindings)
    runs, refused = algorithms_for(graph, bindings)
    assert "separable" not in runs
    assert any(r.startswith("algorithm 'separable' runs depthwise-separable convolutions only") for r in refused)
