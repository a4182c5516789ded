"""Torch's own layers in generated modules (core.codegen.torch_layers): a subgraph that is a
convolution becomes one nn.functional.conv2d on the tensor before its window, windows times
a kernel summed over the window become one WindowProduct, a near-miss of either does not,
and either way the module computes what the primitive-by-primitive module (layers=False,
checked against hand-written torch in test_codegen_torch) computes, with the same weights,
at odd sizes, forward and backward."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from core.codegen import build_module
from core.ir.serialize import load_operator
from tests.core.torch_checks import same_as_primitives
from tests.support import CONV_KINDS, EXAMPLES, chain


def _conv(ops, out=("C_out", "H", "W"), **bindings):
    return chain(["C_in", "H", "W"], list(out), ops, variables=CONV_KINDS, bindings=bindings)


def _unfolds(k_h="K", k_w="K", first="input"):
    return [("uh", "unfold", {"dim": -2, "K": k_h}, [first]), ("uw", "unfold", {"dim": -1, "K": k_w}, ["uh"])]


def _share(dims=(0, 1, 2), reduces=(1, 1, 1), src="uw"):
    steps = [("sh", "share", {"dims": list(dims), "out": "C_out"}, [src])]
    for i, d in enumerate(reduces):
        steps.append((f"r{i}", "reduce", {"dim": d}, [steps[-1][0]]))
    return steps


def _convs(source: str) -> list[str]:
    """The conv2d calls of a module's forward, as 'conv C->K, khxkw' descriptions."""
    return re.findall(r"# (conv \d+->\d+, \d+x\d+)", source)


# -- convolutions become conv2d ------------------------------------------------------------
CONVS = {
    # name: (graph, the conv2d calls expected)
    "standard 3x3, odd sizes": (_conv([*_unfolds(), *_share()], C_in=5, C_out=7, H=9, W=11, K=3), ["conv 5->7, 3x3"]),
    "standard 5x5 on 3x4": (_conv([*_unfolds(), *_share()], C_in=3, C_out=2, H=3, W=4, K=5), ["conv 3->2, 5x5"]),
    "even window 2x4": (
        _conv([*_unfolds("Kh", "Kw"), *_share()], C_in=3, C_out=4, H=7, W=5, Kh=2, Kw=4),
        ["conv 3->4, 2x4"],
    ),
    "share weight kw, c, kh": (
        _conv([*_unfolds(), *_share(dims=(2, 0, 1))], C_in=3, C_out=5, H=5, W=7, K=3),
        ["conv 3->5, 3x3"],
    ),
    "grouped, G=3": (
        _conv(
            [*_unfolds(), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["uw"])], C_in=6, C_out=9, H=7, W=5, K=3, G=3
        ),
        ["conv 6->9, 3x3"],
    ),
    "depthwise with multiplier 2": (
        _conv(
            [*_unfolds(), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["uw"])], C_in=5, C_out=10, H=5, W=5, K=3, G=5
        ),
        ["conv 5->10, 3x3"],
    ),
    "W first, 3x5, strides before and after the fc": (
        _conv(
            [
                ("uw", "unfold", {"dim": -1, "K": "Kw"}, ["input"]),
                ("uh", "unfold", {"dim": -2, "K": "Kh"}, ["uw"]),
                ("sth", "stride", {"dim": -2, "S": "s"}, ["uh"]),
                ("fc", "fc", {"out": "C_out", "groups": "G"}, ["sth"]),
                ("stw", "stride", {"dim": -1, "S": "s"}, ["fc"]),
            ],
            out=("C_out", "H/s", "W/s"),
            C_in=4,
            C_out=6,
            H=10,
            W=6,
            Kh=3,
            Kw=5,
            G=2,
            s=2,
        ),
        ["conv 4->6, 3x5"],
    ),
    # the stride after the first fc is that conv's; the second reads the strided value
    "depthwise, a stride after it, then pointwise": (
        _conv(
            [
                *_unfolds(),
                ("dw", "fc", {"out": "C_in", "groups": "C_in"}, ["uw"]),
                ("stw", "stride", {"dim": -1, "S": "s"}, ["dw"]),
                ("pw", "fc", {"out": "C_out", "groups": "1"}, ["stw"]),
            ],
            out=("C_out", "H", "W/s"),
            C_in=5,
            C_out=6,
            H=5,
            W=8,
            K=3,
            s=2,
        ),
        ["conv 5->5, 3x3", "conv 5->6, 1x1"],
    ),
    "pointwise fc": (
        _conv([("fc", "fc", {"out": "C_out", "groups": "1"}, ["input"])], C_in=7, C_out=3, H=5, W=3),
        ["conv 7->3, 1x1"],
    ),
    "Kx1 grouped fc": (
        _conv(
            [("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["uh"])],
            C_in=4,
            C_out=6,
            H=7,
            W=3,
            K=3,
            G=2,
        ),
        ["conv 4->6, 3x1"],
    ),
    # [G, C/G, H, W]: two channel axes read as C = G * C/G
    "grouped source axes": (
        _conv(
            [
                ("grp", "group", {"dim": 0, "G": "G"}, ["input"]),
                *_unfolds(first="grp"),
                ("fc", "fc", {"out": "C_out"}, ["uw"]),
            ],
            C_in=6,
            C_out=5,
            H=5,
            W=4,
            K=3,
            G=2,
        ),
        ["conv 6->5, 3x3"],
    ),
}


@pytest.mark.parametrize("name", CONVS)
def test_a_convolution_becomes_one_conv2d_on_the_unwindowed_tensor(name):
    graph, expected = CONVS[name]
    source = same_as_primitives(graph)
    assert _convs(source) == expected
    assert "unfold(" not in source and "einsum" not in source and "::" not in source


def test_the_examples_run_torch_layers_where_they_are_layers():
    sizes = {"C_in": 8, "C_out": 12, "H": 7, "W": 5, "K": 3, "G": 2, "g": 2, "s": 2}
    expected = {
        "conv2d": ["conv 8->12, 3x3"],
        "grouped_conv": ["conv 8->12, 3x3"],
        "depthwise_separable": ["conv 8->8, 3x3", "conv 8->12, 1x1"],
        "mixed_conv": ["conv 8->6, 1x1", "conv 8->6, 3x3"],
        "shift_conv": ["conv 8->12, 1x1"],
        "gated_separable": ["conv 8->12, 3x1", "conv 12->12, 1x3"],
        "involution": ["conv 8->18, 1x1"],  # the kernel; applying it is a WindowProduct
        # the first contraction keeps the W window apart (not a conv), the second is a Kx1 conv
        "syno_operator1": ["conv 18->12, 3x1"],
        # a grouped 1xK conv (its groups end up behind the output channels), then a Kx1 conv
        "syno_operator2": ["conv 8->6, 1x3", "conv 6->12, 3x1"],
    }
    for path in sorted(EXAMPLES.glob("*.json")):
        graph = load_operator(path)
        graph.bindings = {k: v for k, v in sizes.items() if k in graph.mentioned_variables()}
        source = same_as_primitives(graph)
        assert _convs(source) == expected[path.stem], path.stem
        assert ("einsum" in source) == (path.stem == "syno_operator1"), path.stem  # its W window kept apart
        assert ("WindowProduct.apply(" in source) == (path.stem == "involution"), path.stem


# -- near-misses stay what they are --------------------------------------------------------
MISSES = {
    # the reduces leave the kw window: y[o, kw, h, w], not a convolution
    "a reduce over the wrong axis": (
        _conv([*_unfolds(), *_share(reduces=(1, 1))], out=("C_out", "K", "H", "W"), C_in=3, C_out=4, H=5, W=6, K=3),
        [],
    ),
    # the weight does not depend on kw, and sums over it: a box filter times a weight, not a conv's weight
    "a share over other dims": (
        _conv([*_unfolds(), *_share(dims=(0, 1))], C_in=3, C_out=4, H=5, W=6, K=3),
        [],
    ),
    # a roll between the windows: only the part after it is a (1xK) convolution, over C*K channels
    "a shift between the windows": (
        _conv(
            [
                ("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]),
                ("sh", "shift", {"dim": -1, "amount": 1}, ["uh"]),
                ("uw", "unfold", {"dim": -1, "K": "K"}, ["sh"]),
                ("fc", "fc", {"out": "C_out"}, ["uw"]),
            ],
            C_in=3,
            C_out=4,
            H=5,
            W=6,
            K=3,
        ),
        ["conv 9->4, 1x3"],
    ),
    # a stride before the window: a dilated window, so the conv reads the strided tensor
    "a stride before the window": (
        _conv(
            [
                ("st", "stride", {"dim": 1, "S": "s"}, ["input"]),
                ("uh", "unfold", {"dim": 1, "K": "K"}, ["st"]),
                ("fc", "fc", {"out": "C_out"}, ["uh"]),
            ],
            out=("C_out", "H/s", "W"),
            C_in=3,
            C_out=4,
            H=8,
            W=5,
            K=3,
            s=2,
        ),
        ["conv 3->4, 3x1"],
    ),
    # the same axis unfolded twice: the first window is a channel axis of the second conv's input
    "two windows on one axis": (
        _conv(
            [
                ("u1", "unfold", {"dim": 1, "K": "K"}, ["input"]),
                ("u2", "unfold", {"dim": -2, "K": "K"}, ["u1"]),
                ("fc", "fc", {"out": "C_out"}, ["u2"]),
            ],
            C_in=2,
            C_out=3,
            H=7,
            W=4,
            K=3,
        ),
        ["conv 6->3, 3x1"],
    ),
    # groups cutting through the window: blocks of C*K/G = 2 of (c, k), not whole channels;
    # a grouped 1x1 conv over the C*K channels of the window
    "groups that cut the window": (
        _conv(
            [("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["uh"])],
            C_in=2,
            C_out=3,
            H=5,
            W=4,
            K=3,
            G=3,
        ),
        ["conv 6->3, 1x1"],
    ),
    # a channel axis after the spatial ones (expand at the end): fc flattens (C, E), torch's layout is not NCHW
    "a channel axis after the spatial axes": (
        _conv(
            [("ex", "expand", {"dim": 3, "size": "2"}, ["input"]), ("fc", "fc", {"out": "C_out"}, ["ex"])],
            C_in=3,
            C_out=4,
            H=5,
            W=4,
        ),
        [],
    ),
    # a ReLU on the window: the fc reads (C, K) channels of a materialised tensor (a 1x1 conv), not a KxK one
    "an activation on the window": (
        _conv(
            [
                ("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]),
                ("act", "elementwise", {"fn": "relu"}, ["uh"]),
                ("fc", "fc", {"out": "C_out"}, ["act"]),
            ],
            C_in=3,
            C_out=4,
            H=5,
            W=4,
            K=3,
        ),
        ["conv 9->4, 1x1"],
    ),
}


@pytest.mark.parametrize("name", MISSES)
def test_a_near_miss_is_not_read_as_the_convolution_it_resembles(name):
    graph, expected = MISSES[name]
    source = same_as_primitives(graph)
    assert _convs(source) == expected


def test_a_window_read_elsewhere_too_stays_for_that_reader():
    # the H window feeds the conv and a max over the window: the conv reads x, the fold the window
    graph = chain(
        ["C_in", "H", "W"],
        ["C_in", "H", "W"],
        [
            ("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("fc", "fc", {"out": "C_in"}, ["uh"]),
            ("mx", "fold", {"dim": 1, "fn": "max"}, ["uh"]),
            ("add", "broadcast", {"fn": "add"}, ["mx", "fc"]),
        ],
        variables=CONV_KINDS,
        bindings={"C_in": 4, "H": 5, "W": 3, "K": 3},
    )
    source = same_as_primitives(graph)
    assert _convs(source) == ["conv 4->4, 3x1"] and source.count("unfold(") == 1


def test_reduces_in_a_row_are_one_sum_unless_a_value_between_is_read():
    windows = chain(
        ["C_in", "H", "W"],
        ["C_in", "H", "W"],
        [
            *_unfolds(),
            ("sq", "elementwise", {"fn": "sqr"}, ["uw"]),
            ("r1", "reduce", {"dim": 1}, ["sq"]),
            ("r2", "reduce", {"dim": 1}, ["r1"]),
        ],
        variables=CONV_KINDS,
        bindings={"C_in": 3, "H": 5, "W": 4, "K": 3},
    )
    assert ".sum((2, 3))  # reduce 'r1', 'r2'" in same_as_primitives(windows)
    graph = chain(
        ["C", "H", "W"],
        ["H"],
        [
            ("r1", "reduce", {"dim": 0}, ["input"]),
            ("r2", "reduce", {"dim": -1}, ["r1"]),
            ("m", "fold", {"dim": -1, "fn": "max"}, ["r1"]),
            ("add", "broadcast", {"fn": "add"}, ["r2", "m"]),
        ],
        bindings={"C": 3, "H": 4, "W": 5},
    )
    source = same_as_primitives(graph, x_shape=(2, 3, 4, 5))
    assert "x.sum(1)" in source and "t_r1.sum(2)" in source
    chained = chain(
        ["C", "H", "W"],
        ["H"],
        [("r1", "reduce", {"dim": -1}, ["input"]), ("r2", "reduce", {"dim": 0}, ["r1"])],
        bindings={"C": 3, "H": 4, "W": 5},
    )
    assert "x.sum((1, 3))" in same_as_primitives(chained, x_shape=(2, 3, 4, 5))


# -- windows times a kernel, summed over the window: one WindowProduct -----------------------
def _involution(windows=("uh", "uw"), group_first=False, fn="mul", reduces=None, split=False, **bindings):
    """Involution's graph: a kernel [G, window.., H, W] from an fc of the input, times the input's
    windows grouped [G, C/G, window.., H, W] (with `split`, [G, C/2G, 2, window.., H, W], the
    last axis summed after the windows), summed over the reduces' axes ("uh", "uw" or "c"; the
    windows by default)."""
    sizes = {"uh": "Kh", "uw": "Kw"}
    kernel = [("kfc", "fc", {"out": "G*" + "*".join(sizes[u] for u in windows)}, ["input"])]
    kernel.append(("kg", "group", {"dim": 0, "G": "G"}, ["kfc"]))
    if len(windows) == 2:
        kernel.append(("ks", "split", {"dim": 1, "B": sizes[windows[1]]}, ["kg"]))
    steps, source = list(kernel), "input"
    if group_first:
        steps.append(("grp", "group", {"dim": 0, "G": "G"}, ["input"]))
        source = "grp"
    for u in windows:
        steps.append((u, "unfold", {"dim": -2 if u == "uh" else -1, "K": sizes[u]}, [source]))
        source = u
    if not group_first:
        steps.append(("grp", "group", {"dim": 0, "G": "G"}, [source]))
        source = "grp"
    if split:
        steps.append(("two", "split", {"dim": 1, "B": "2"}, [source]))
        source = "two"
    steps.append(("prod", "broadcast", {"fn": fn}, [kernel[-1][0], source]))
    # the product is [G, C/G, windows.., H, W] (or [G, C/2G, 2, windows.., H, W])
    axis = {"c": 1, **{u: 2 + split + i for i, u in enumerate(windows)}}
    removed, prev = [], "prod"
    for i, r in enumerate(reduces or windows):
        d = axis[r] - sum(axis[q] < axis[r] for q in removed)
        steps.append((f"r{i}", "reduce", {"dim": d}, [prev]))
        removed.append(r)
        prev = f"r{i}"
    out = ["C_in", "H", "W"] if "c" not in (reduces or ()) else ["G", "H", "W"]
    if split:  # a reduce reads the [G, C/2G, 2, H, W] the window product gives
        steps.append(("sum_two", "reduce", {"dim": 2}, [prev]))
        prev, out = "sum_two", ["C_in/2", "H", "W"]
    if "c" not in (reduces or ()):
        steps.append(("merge", "merge", {"dim": 0}, [prev]))
    sizes = {"C_in": 6, "H": 7, "W": 5, "Kh": 3, "Kw": 5, "G": 3, **bindings}
    return chain(["C_in", "H", "W"], out, steps, variables=CONV_KINDS, bindings=sizes)


WINDOW_PRODUCTS = {
    "involution 3x5, odd sizes": _involution(),
    "W window first": _involution(windows=("uw", "uh")),
    "even windows 2x4": _involution(Kh=2, Kw=4),
    "windows larger than the input": _involution(H=2, W=3),
    "a 1xK window": _involution(windows=("uw",)),
    "a Kx1 window": _involution(windows=("uh",)),
    "channels grouped before the windows": _involution(group_first=True),
    "reduces in the other order": _involution(reduces=("uw", "uh")),
    "one channel per group": _involution(G=6),
    "five channels per group": _involution(C_in=10, G=2),
    "the kernel repeated over two axes": _involution(C_in=12, G=2, split=True),
}


@pytest.mark.parametrize("name", WINDOW_PRODUCTS)
def test_windows_times_a_kernel_summed_over_the_window_is_one_window_product(name):
    forward = same_as_primitives(WINDOW_PRODUCTS[name]).split("def forward(self")[1]
    assert forward.count("WindowProduct.apply(") == 1
    assert "unfold(" not in forward and "# reduce 'r" not in forward  # the window's reduces are in it


def _windows_times_their_relu(*readers):
    """relu(windows) * windows summed over the window (the product is "sq"), then `readers`."""
    steps = [
        *_unfolds(),
        ("act", "elementwise", {"fn": "relu"}, ["uw"]),
        ("sq", "broadcast", {"fn": "mul"}, ["act", "uw"]),
        ("r1", "reduce", {"dim": 1}, ["sq"]),
        ("r2", "reduce", {"dim": 1}, ["r1"]),
        *readers,
    ]
    return chain(
        ["C_in", "H", "W"],
        ["C_in", "H", "W"],
        steps,
        variables=CONV_KINDS,
        bindings={"C_in": 3, "H": 5, "W": 6, "K": 3},
    )


def test_a_window_product_with_a_kernel_made_of_the_windows_or_of_their_shape():
    forward = same_as_primitives(_windows_times_their_relu()).split("def forward(self")[1]
    assert "WindowProduct.apply(" in forward and forward.count("nn.functional.unfold(") == 1  # the kernel
    for ports in (["k", "uw"], ["uw", "k"]):  # a per-channel kernel, the windows on either side
        per_channel = chain(
            ["C_in", "H", "W"],
            ["C_in", "H", "W"],
            [
                ("fc", "fc", {"out": "C_in*K*K"}, ["input"]),
                ("s1", "split", {"dim": 0, "B": "K*K"}, ["fc"]),
                ("k", "split", {"dim": 1, "B": "K"}, ["s1"]),
                *_unfolds(),
                ("prod", "broadcast", {"fn": "mul"}, ports),
                ("r1", "reduce", {"dim": 1}, ["prod"]),
                ("r2", "reduce", {"dim": 1}, ["r1"]),
            ],
            variables=CONV_KINDS,
            bindings={"C_in": 4, "H": 5, "W": 3, "K": 3},
        )
        source = same_as_primitives(per_channel)
        assert "WindowProduct.apply(" in source and "unfold(" not in source.split("def forward(self")[1], ports


def test_a_window_product_without_the_input_needing_gradients():
    """The weights' gradients alone (the input is data), as the first layer of a network gets them."""
    graph = WINDOW_PRODUCTS["involution 3x5, odd sizes"]
    torch.manual_seed(0)
    fast, slow = build_module(graph), build_module(graph, layers=False)
    slow.load_state_dict(fast.state_dict())
    x = torch.randn(2, 6, 7, 5)
    fast(x).square().sum().backward()
    slow(x).square().sum().backward()
    torch.testing.assert_close(fast.w_kfc.grad, slow.w_kfc.grad, atol=1e-4, rtol=1e-4)


WINDOW_MISSES = {
    "windows plus a kernel": _involution(fn="add"),
    "a channel axis summed between the windows": _involution(reduces=("uh", "c", "uw")),
    "a channel axis summed first": _involution(reduces=("c", "uh", "uw")),
}


@pytest.mark.parametrize("name", WINDOW_MISSES)
def test_a_near_miss_of_a_window_product_stays_what_it_is(name):
    source = same_as_primitives(WINDOW_MISSES[name])
    assert "WindowProduct" not in source


def test_a_window_product_whose_product_is_read_elsewhere_stays_what_it_is():
    graph = _windows_times_their_relu(
        ("m1", "fold", {"dim": 1, "fn": "max"}, ["sq"]),
        ("m2", "fold", {"dim": 1, "fn": "max"}, ["m1"]),
        ("add", "broadcast", {"fn": "add"}, ["m2", "r2"]),
    )
    assert "WindowProduct" not in same_as_primitives(graph)


def test_a_conv_with_an_even_window_pads_like_unfold():
    """Independent of the generator's reading: unfold pads K//2 zeros before and K//2 - 1 after."""
    graph, _ = CONVS["even window 2x4"]
    module = build_module(graph)
    x = torch.randn(2, 3, 7, 5)
    weight = module.w_sh.detach()  # [C_out, C_in, Kh, Kw]
    want = F.conv2d(F.pad(x, (2, 1, 1, 0)), weight)
    with torch.no_grad():
        torch.testing.assert_close(module(x), want, atol=1e-5, rtol=1e-5)


WINDOWS = {
    # (unfolds, fold axis) a max over a window, so no convolution consumes the windows
    "H then W": (
        [("u1", "unfold", {"dim": -2, "K": "Kh"}, ["input"]), ("u2", "unfold", {"dim": -1, "K": "Kw"}, ["u1"])]
    ),
    "W then H": (
        [("u1", "unfold", {"dim": -1, "K": "Kw"}, ["input"]), ("u2", "unfold", {"dim": -2, "K": "Kh"}, ["u1"])]
    ),
    "W only": ([("u2", "unfold", {"dim": -1, "K": "Kw"}, ["input"])]),
}


@pytest.mark.parametrize("kh, kw", [(3, 5), (2, 3), (4, 4)])
@pytest.mark.parametrize("name", WINDOWS)
def test_windows_are_one_im2col_in_the_operators_layout(name, kh, kw):
    steps = [*WINDOWS[name], ("mx", "fold", {"dim": 1, "fn": "max"}, ["u2"])]
    out = (
        ["C_in", "Kh", "H", "W"]
        if name == "W then H"
        else (["C_in", "H", "W"] if name == "W only" else ["C_in", "Kw", "H", "W"])
    )
    graph = chain(
        ["C_in", "H", "W"], out, steps, variables=CONV_KINDS, bindings={"C_in": 3, "H": 5, "W": 7, "Kh": kh, "Kw": kw}
    )
    source = same_as_primitives(graph)
    assert source.count("nn.functional.unfold(") == 1 and ".unfold(" not in source.replace("functional.unfold(", "")
