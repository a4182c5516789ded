"""Torch code generation: the examples against torch's own convolutions, each
primitive's semantics on tiny hand-made graphs against hand-written torch, the
standalone source in a fresh interpreter, and the errors users see."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from core.codegen import CodegenError, build_module, module_source, weight_names
from core.errors import TesseraError
from core.ir.errors import BindingError
from core.ir.graph import OperatorGraph
from core.ir.serialize import load_operator
from tests.support import EXAMPLES, chain

SMALL = {"C_in": 8, "C_out": 8, "H": 10, "W": 10, "K": 3, "G": 2, "g": 2, "s": 2}
ATOL = 1e-5


def _example(name: str) -> OperatorGraph:
    return load_operator(EXAMPLES / f"{name}.json")


def _run(graph: OperatorGraph, x: torch.Tensor, bindings=None) -> torch.Tensor:
    with torch.no_grad():
        return build_module(graph, bindings)(x)


def _close(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, atol=ATOL, rtol=1e-5)


# -- the examples against torch ------------------------------------------------------
@pytest.mark.parametrize("k", [3, 5])
def test_conv2d_equals_torch_conv2d(k):
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 6, k, padding=k // 2, bias=False)
    module = build_module(_example("conv2d"), {**SMALL, "C_out": 6, "K": k})
    with torch.no_grad():
        module.get_parameter(weight_names(_example("conv2d"))["share"]).copy_(conv.weight)
        x = torch.randn(3, 8, 10, 10)
        _close(module(x), F.conv2d(x, conv.weight, padding=k // 2))


def test_grouped_conv_equals_torch_grouped_conv2d():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 12, 3, padding=1, groups=4, bias=False)
    module = build_module(_example("grouped_conv"), {**SMALL, "C_out": 12, "G": 4})
    with torch.no_grad():
        module.w_grouped_fc.copy_(conv.weight.reshape(12, -1))
        x = torch.randn(2, 8, 10, 10)
        _close(module(x), conv(x))


def test_depthwise_separable_equals_depthwise_then_pointwise_conv():
    torch.manual_seed(0)
    depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
    pointwise = torch.nn.Conv2d(8, 6, 1, bias=False)
    module = build_module(_example("depthwise_separable"), {**SMALL, "C_out": 6})
    with torch.no_grad():
        module.w_depthwise.copy_(depthwise.weight.reshape(8, 9))
        module.w_pointwise.copy_(pointwise.weight.reshape(6, 8))
        x = torch.randn(2, 8, 10, 10)
        _close(module(x), pointwise(depthwise(x)))


def test_mixed_conv_is_two_convolutions_concatenated():
    graph = _example("mixed_conv")
    module = build_module(graph, SMALL)
    names = weight_names(graph)
    wide, point = torch.randn(4, 8, 3, 3), torch.randn(4, 8, 1, 1)
    with torch.no_grad():
        module.get_parameter(names["conv_kxk"]).copy_(wide.reshape(4, -1))
        module.get_parameter(names["conv_1x1"]).copy_(point.reshape(4, -1))
    x = torch.randn(2, 8, 10, 10)
    with torch.no_grad():
        got = module(x)
    _close(got, torch.cat((F.conv2d(x, wide, padding=1), F.conv2d(x, point)), 1))


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_example_builds_and_runs(path):
    graph = load_operator(path)
    module = build_module(graph, SMALL)
    x = torch.randn(2, 8, 10, 10)
    y = module(x)
    out_channels = SMALL["C_in"] if path.stem == "involution" else SMALL["C_out"]
    assert y.shape == (2, out_channels, 10, 10) and y.dtype == torch.float32
    assert torch.isfinite(y).all()
    y.sum().backward()  # trainable: every weight receives a gradient
    assert {name for name, p in module.named_parameters() if p.grad is not None} == set(weight_names(graph).values())


def test_default_bindings_are_the_graphs_own():
    graph = _example("conv2d")
    graph.bindings = {**SMALL, "H": 6, "W": 7}
    assert build_module(graph)(torch.randn(1, 8, 6, 7)).shape == (1, 8, 6, 7)
    assert build_module(graph, {"W": 5})(torch.randn(1, 8, 6, 5)).shape == (1, 8, 6, 5)


def test_weights_are_initialised_like_torch_convolutions():
    torch.manual_seed(0)
    module = build_module(_example("conv2d"), SMALL)
    bound = 1 / (8 * 3 * 3) ** 0.5  # Conv2d(8, 8, 3): kaiming-uniform with a=sqrt(5)
    w = module.w_share.detach()
    assert w.shape == (8, 8, 3, 3)
    assert w.abs().max() <= bound and w.abs().max() > 0.9 * bound
    assert abs(w.std().item() - bound / 3**0.5) < 0.15 * bound


# -- primitive semantics on tiny graphs -------------------------------------------------------
TINY = {"C": 6, "H": 5, "W": 4}


def _x(c=6):
    torch.manual_seed(1)
    return torch.randn(2, c, 5, 4)


@pytest.mark.parametrize("dim,amount", [(1, 2), (-1, -1), (0, 1)])
def test_shift_is_torch_roll(dim, amount):
    g = chain(
        ["C", "H", "W"], ["C", "H", "W"], [("s", "shift", {"dim": dim, "amount": amount}, ["input"])], bindings=TINY
    )
    x = _x()
    _close(_run(g, x), torch.roll(x, amount, dim % 3 + 1))


@pytest.mark.parametrize("dim,k", [(1, 3), (-1, 3), (-1, 2), (1, 5)])
def test_unfold_reads_neighbours_with_zero_padding(dim, k):
    g = chain(
        ["C", "H", "W"],
        ["C", "K", "H", "W"],
        [("u", "unfold", {"dim": dim, "K": "K"}, ["input"])],
        bindings={**TINY, "K": k},
    )
    x = _x()
    axis = dim % 3 + 1
    size = x.shape[axis]
    padded = F.pad(x, (k // 2, k // 2) if axis == 3 else (0, 0, k // 2, k // 2))
    # window j at position i reads x[i + j - k//2]; padded index = i + j
    want = torch.stack([padded.narrow(axis, j, size) for j in range(k)], dim=2)
    _close(_run(g, x), want)


def test_unfold_twice_puts_windows_before_spatial_axes():
    g = chain(
        ["C", "H", "W"],
        ["C", "K", "K", "H", "W"],
        [("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]), ("uw", "unfold", {"dim": -1, "K": "K"}, ["uh"])],
        bindings={**TINY, "K": 3},
    )
    x = _x()
    got = _run(g, x)
    padded = F.pad(x, (1, 1, 1, 1))
    for kh in range(3):
        for kw in range(3):
            _close(got[:, :, kh, kw], padded[:, :, kh : kh + 5, kw : kw + 4])


@pytest.mark.parametrize("fn,reduce", [("avg", lambda x, d: x.mean(d)), ("max", lambda x, d: x.amax(d))])
@pytest.mark.parametrize("dim,out", [(0, ["H", "W"]), (-1, ["C", "H"])])
def test_fold(fn, reduce, dim, out):
    g = chain(["C", "H", "W"], out, [("f", "fold", {"dim": dim, "fn": fn}, ["input"])], bindings=TINY)
    x = _x()
    _close(_run(g, x), reduce(x, dim % 3 + 1))


def test_elementwise_sqrt_is_of_the_absolute_value_and_softmax_reduce():
    g = chain(
        ["C", "H", "W"],
        ["H", "W"],
        [
            ("r", "elementwise", {"fn": "sqrt"}, ["input"]),
            ("sq", "elementwise", {"fn": "sqr"}, ["r"]),
            ("sm", "softmax", {"dim": 0}, ["sq"]),
            ("sum", "reduce", {"dim": 0}, ["sm"]),
        ],
        bindings=TINY,
    )
    x = _x()
    _close(_run(g, x), torch.softmax(x.abs(), 1).sum(1))


def test_broadcast_repeats_each_lhs_element_over_consecutive_rhs_elements():
    # LHS [G, H, W] (a mean per channel group), RHS [C, H, W]: LHS element g covers channels g*C/G .. (g+1)*C/G - 1
    g = chain(
        ["C", "H", "W"],
        ["C", "H", "W"],
        [
            ("grp", "group", {"dim": 0, "G": "G"}, ["input"]),
            ("m", "fold", {"dim": 1, "fn": "avg"}, ["grp"]),
            ("b", "broadcast", {"fn": "sub"}, ["m", "input"]),
        ],
        bindings={**TINY, "G": 2},
    )
    x = _x()
    lhs = x.reshape(2, 2, 3, 5, 4).mean(2)
    _close(_run(g, x), torch.repeat_interleave(lhs, 3, dim=1) - x)


def test_broadcast_reads_rhs_middle_as_l_by_m_when_no_axes_line_up():
    # LHS middle [G=2], RHS middle [C/s, s] = [3, 4]: no run of RHS axes has size 2, so RHS is read as [2, 6]
    g = chain(
        ["C", "H", "W"],
        ["C/s", "s", "H", "W"],
        [
            ("grp", "group", {"dim": 0, "G": "G"}, ["input"]),
            ("m", "fold", {"dim": 1, "fn": "max"}, ["grp"]),
            ("sp", "split", {"dim": 0, "B": "s"}, ["input"]),
            ("b", "broadcast", {"fn": "max"}, ["m", "sp"]),
        ],
        bindings={"C": 12, "H": 5, "W": 4, "G": 2, "s": 4},
    )
    x = _x(12)
    lhs = x.reshape(2, 2, 6, 5, 4).amax(2)
    want = torch.maximum(torch.repeat_interleave(lhs, 6, dim=1), x).reshape(2, 3, 4, 5, 4)
    _close(_run(g, x), want)


def test_views_stride_expand_merge():
    g = chain(
        ["C", "H", "W"],
        ["2*C", "H", "W/s"],
        [
            ("st", "stride", {"dim": -1, "S": "s"}, ["input"]),
            ("ex", "expand", {"dim": 0, "size": "2"}, ["st"]),
            ("mg", "merge", {"dim": 0}, ["ex"]),
        ],
        bindings={**TINY, "s": 2},
    )
    x = _x()
    want = x[..., ::2].unsqueeze(1).expand(2, 2, 6, 5, 2).reshape(2, 12, 5, 2)
    _close(_run(g, x), want)


def test_fc_flattens_channel_axes_in_order_even_after_spatial_ones():
    # expand appends a channel axis E after the spatial axes: channels (C, E) flatten to c*E + e
    g = chain(
        ["C", "H", "W"],
        ["C_out", "H", "W"],
        [("ex", "expand", {"dim": 3, "size": "E"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["ex"])],
        bindings={**TINY, "E": 2, "C_out": 4, "G": 2},
    )
    module = build_module(g)
    x = _x()
    w = module.w_fc.detach()  # [C_out, C*E/G] = [4, 6]
    flat = x.unsqueeze(2).expand(2, 6, 2, 5, 4).reshape(2, 2, 6, 5, 4)  # [N, G, P/G, H, W]
    want = torch.einsum("ngphw,gop->ngohw", flat, w.reshape(2, 2, 6)).reshape(2, 4, 5, 4)
    _close(module(x), want)


def test_share_with_partial_reduce_is_one_einsum():
    # weight over channels only, reduce over H: y[o, c, w] = sum_h x[c, h, w] * w[o, c]
    g = chain(
        ["C", "H", "W"],
        ["C_out", "C", "W"],
        [("sh", "share", {"dims": [0], "out": "C_out"}, ["input"]), ("r", "reduce", {"dim": 2}, ["sh"])],
        bindings={**TINY, "C_out": 3},
    )
    module = build_module(g)
    assert module.w_sh.shape == (3, 6)
    source = module_source(g)
    assert source.count("torch.einsum") == 1 and ".sum(" not in source
    x = _x()
    _close(module(x), torch.einsum("nchw,oc->nocw", x, module.w_sh.detach()))


# -- the standalone source ------------------------------------------------------------
_CHECK_SOURCES = textwrap.dedent("""
    import importlib.util, json, pathlib, sys
    import torch
    folder = pathlib.Path(sys.argv[1])
    payload = torch.load(folder / "payload.pt", weights_only=True)
    diffs = {}
    for name, case in payload.items():
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        op = module.Generated()
        op.load_state_dict(case["state"])
        with torch.no_grad():
            diffs[name] = (op(case["x"]) - case["y"]).abs().max().item()
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("core", "app", "views"))
    print(json.dumps({"diffs": diffs, "leaked": leaked}))
""")


def test_standalone_source_in_a_fresh_interpreter_matches_the_module(tmp_path):
    payload = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        graph = load_operator(path)
        torch.manual_seed(0)
        module = build_module(graph, SMALL)
        with torch.no_grad():
            for p in module.parameters():
                p.normal_()  # weights unlike the fresh instance's own initialisation
            x = torch.randn(2, 8, 10, 10)
            payload[path.stem] = {"state": module.state_dict(), "x": x, "y": module(x)}
        (tmp_path / f"{path.stem}.py").write_text(module_source(graph, SMALL, class_name="Generated"))
    torch.save(payload, tmp_path / "payload.pt")
    done = subprocess.run(
        [sys.executable, "-c", _CHECK_SOURCES, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["leaked"] == []
    assert set(result["diffs"]) == set(payload)
    assert all(d <= ATOL for d in result["diffs"].values()), result["diffs"]


def test_source_has_one_line_per_primitive_with_node_and_shape():
    source = module_source(_example("conv2d"), SMALL, layers=False)
    assert "class Conv2d(nn.Module):" in source
    assert source.splitlines()[2:4] == ["import torch", "from torch import nn"]
    assert "# unfold 'unfold_h': [C_in, K, H, W]" in source
    assert "# share 'share' + reduce 'sum_cin', 'sum_kh', 'sum_kw': [C_out, H, W]" in source
    assert "nn.Parameter(torch.empty(8, 8, 3, 3))" in source


def test_a_layer_line_names_the_layer_and_every_node_it_stands_for():
    source = module_source(_example("conv2d"), SMALL)
    assert (
        "t_sum_kw = nn.functional.conv2d(x, self.w_share, padding=1)  # conv 8->8, 3x3, stride 1, padding 1, " in source
    )
    assert (
        "groups 1 = unfold 'unfold_h', unfold 'unfold_w', share 'share' + reduce 'sum_cin', 'sum_kh', 'sum_kw': "
        "[C_out, H, W]" in source
    )
    assert "unfold(" not in source and "n = x.shape[0]" not in source  # nothing reads the views or the batch size


def test_codegen_imports_torch_only_to_build():
    script = (
        "import sys\nfrom core.ir.serialize import load_operator\nfrom core.codegen import module_source\n"
        f"module_source(load_operator({str(EXAMPLES / 'conv2d.json')!r}))\nprint('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_hostile_node_ids_are_sanitised_and_never_become_code():
    evil = 'x"""\nimport os; os.system("echo pwned")\n#'
    g = chain(
        ["C", "H", "W"],
        ["C_out", "H", "W"],
        [
            (evil, "elementwise", {"fn": "relu"}, ["input"]),
            ("a-b", "shift", {"dim": 1}, [evil]),
            ("a_b", "fc", {"out": "C_out"}, ["a-b"]),
            ("a b", "fc", {"out": "C_out"}, ["a_b"]),
        ],
        bindings={**TINY, "C_out": 3},
    )
    g.name = 'bad"""\nimport os'
    source = module_source(g)
    assert not any(line.lstrip().startswith("import os") for line in source.splitlines())
    assert "import os" not in source.replace(ascii(evil), "").replace(ascii(g.name), "")
    names = weight_names(g)
    assert names == {"a_b": "w_a_b", "a b": "w_a_b_2"}
    module = build_module(g)
    assert set(module.state_dict()) == set(names.values())
    x = _x()
    want = torch.einsum("nphw,op->nohw", torch.roll(torch.relu(x), 1, 2), module.w_a_b.detach())
    want = torch.einsum("nphw,op->nohw", want, module.w_a_b_2.detach())
    _close(module(x), want)


# -- errors -----------------------------------------------------------------------------
def test_missing_binding_names_node_and_dimension():
    graph = _example("conv2d")
    graph.bindings = {"C_in": 8, "C_out": 8, "H": 10, "W": 10}
    with pytest.raises(BindingError, match=r"unfold unfold_h dim 1: no value for K"):
        build_module(graph)


def test_non_integer_size_names_node_and_dimension():
    with pytest.raises(BindingError, match=r"group channel_groups dim 1: C_in/G = 8/3 is not an integer"):
        build_module(_example("involution"), {**SMALL, "G": 3})
    # the weight of a grouped fc, which no tensor shape shows
    with pytest.raises(BindingError, match=r"fc grouped_fc weight dim 1: C_in\*K\^2/G"):
        module_source(_example("grouped_conv"), {**SMALL, "C_in": 5, "G": 2})
    with pytest.raises(BindingError, match=r"fc grouped_fc .*: C_out/G = 8/3 is not an integer"):
        build_module(_example("grouped_conv"), {**SMALL, "C_in": 9, "G": 3})
    with pytest.raises(BindingError, match=r"binding H=0"):
        build_module(_example("conv2d"), {**SMALL, "H": 0})


def test_invalid_graph_names_the_node():
    g = chain(
        ["C", "H", "W"], ["C", "H", "W"], [("u", "unfold", {"dim": 0, "K": "K"}, ["input"])], bindings={**TINY, "K": 3}
    )
    with pytest.raises(CodegenError, match=r"unfold u: unfold needs a spatial axis"):
        build_module(g)


def test_unsolved_dynamic_variable_is_refused_until_bound_to_a_solution():
    g = chain(
        ["C", "H", "W"], ["C_out", "H", "W"], [("f", "fc", {"out": "x1"}, ["input"])], bindings={**TINY, "C_out": 4}
    )
    with pytest.raises(CodegenError, match=r"output dim 0: x1 must equal C_out.*x1 .*unbound"):
        build_module(g)
    with pytest.raises(CodegenError, match=r"bound to 5"):
        build_module(g, {"x1": 5})
    assert build_module(g, {"x1": 4})(_x()).shape == (2, 4, 5, 4)


def test_bad_class_name_is_refused():
    for bad in ("not valid", "class", "torch", "Ünïcode"):
        with pytest.raises(CodegenError, match="class name"):
            module_source(_example("conv2d"), SMALL, class_name=bad)
    assert issubclass(CodegenError, TesseraError)
    graph = _example("conv2d")
    for name, expected in (("none", "OpNone"), ("2-stage conv", "Op2StageConv"), ("", "Operator")):
        graph.name = name
        assert type(build_module(graph, SMALL)).__name__ == expected
