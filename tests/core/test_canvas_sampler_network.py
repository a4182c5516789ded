"""Canvas solved network-wide: one group count for every layer, dynamic variables whole at every
layer's sizes, costs summed over the layers, and the shape and pruning rules of the paper."""

from collections import Counter

import pytest

from core.analysis.budget import base_values
from core.analysis.shapes import infer_shapes
from core.analysis.summary import summarize
from core.data.conv_fit import ConvShape, layer_bindings
from core.data.specs import BackboneSpec
from core.data.swap_convs import searched_layers
from core.ir.graph import INPUT, OUTPUT, OperatorGraph
from core.ir.primitives import make
from core.ir.serialize import content_hash, load_operator
from core.ir.symbolic import parse_size
from core.search.base import Budget, Limits
from core.search.canvas_sampler import CanvasSampler, _fix_group_count, _one_dynamic_per_tensor
from tests.support import EXAMPLES

#: ResNet-18 at the proxy width and at its standard width: channels 16 to 512
NETWORK = searched_layers(BackboneSpec("resnet18", 16, 16)) + searched_layers(BackboneSpec("resnet18", 64, 32))


@pytest.fixture(scope="module")
def conv():
    return load_operator(EXAMPLES / "conv2d.json")


def _chain(*prims, out="C_out", bindings=None) -> OperatorGraph:
    g = OperatorGraph(["C_in", "H", "W"], [out, "H", "W"], spatial=2)
    g.bindings = dict(bindings or {})
    prev = INPUT
    for i, (op, params) in enumerate(prims):
        g.insert_node(f"n{i}", make(op, params))
        g.insert_edge(prev, f"n{i}", 0)
        prev = f"n{i}"
    g.insert_edge(prev, OUTPUT, 0)
    return g


def test_searched_layers_are_the_standard_convolutions_but_the_stem():
    layers = searched_layers(BackboneSpec("resnet18", 16, 16))
    assert layers == Counter(
        {
            ConvShape(16, 16, 16, 16, 3): 4,
            ConvShape(32, 32, 8, 8, 3): 3,
            ConvShape(64, 64, 4, 4, 3): 3,
            ConvShape(128, 128, 2, 2, 3): 3,
        }
    )


def test_a_base_is_rounded_up_to_what_its_uses_divide_it_by_at_every_layer():
    # x1 channels in 8 groups: x1 must be a multiple of 8 at every layer
    g = _chain(("fc", {"out": "x1", "groups": "1"}), ("fc", {"out": "C_out", "groups": "8"}))
    sizes = [{"C_in": 16, "C_out": 16, "H": 4, "W": 4}, {"C_in": 512, "C_out": 512, "H": 4, "W": 4}]
    assert base_values(g, ["x1"], parse_size("C_in"), sizes) == {"x1": parse_size("C_in/2")}
    assert base_values(g, ["x1"], parse_size("C_in"), sizes[1:]) == {"x1": parse_size("C_in/8")}
    assert base_values(g, ["x1"], parse_size("C_in"), [{"C_in": 12, "C_out": 12, "H": 4, "W": 4}]) == {
        "x1": parse_size("2*C_in")
    }
    # in 3 groups: no power-of-two share of 16 channels is a multiple of 3
    thirds = _chain(("fc", {"out": "x1", "groups": "1"}), ("fc", {"out": "C_out", "groups": "3"}))
    assert base_values(thirds, ["x1"], parse_size("C_in"), sizes[:1]) is None


def test_limits_over_layers_sum_the_network_and_refuse_what_one_layer_cannot_build(conv):
    layers = {ConvShape(16, 16, 8, 8, 3): 2, ConvShape(24, 24, 4, 4, 3): 1}
    limits = Limits(conv, Budget(), layers)
    assert limits.reference_flops == 2 * (2 * 16 * 16 * 9 * 64) + 2 * 24 * 24 * 9 * 16
    grouped = load_operator(EXAMPLES / "grouped_conv.json")
    grouped.bindings = {"G": 8}  # 16 and 24 channels both split into 8 groups
    assert limits.measure(grouped) is not None
    grouped.bindings = {"G": 16}  # 24 channels in 16 groups: not whole at the second layer
    assert limits.measure(grouped) is None
    assert Limits(conv, Budget()).measure(grouped) is not None  # fine at the template's own sizes


def test_canvas_network_wide_candidates_build_at_every_layer(conv):
    sampler = CanvasSampler(conv, Budget(flops=1.0, max_primitives=6), seed=5, layers=NETWORK)
    found = sampler.ask(40)
    assert len(found) == 40
    for c in found:
        for layer in NETWORK:
            s = summarize(c.graph, layer_bindings(c.graph, layer))
            assert s.ok and s.numeric_cost is not None, (layer, s.messages())
        assert "G" not in c.graph.mentioned_variables()  # the group count is written in
    # the solver's bases are almost never invalid (Canvas's C/8 base was, for 22% of calls)
    calls = sum(sampler.stats[k] for k in ("solver solved", "solver invalid", "solver over budget"))
    assert sampler.stats["solver invalid"] <= 0.05 * calls
    assert sampler.group_choices == [2, 4, 8]  # divisors of gcd(16, ..., 512)


def test_group_counts_differing_only_in_g_are_two_operators():
    g = _chain(("fc", {"out": "C_out", "groups": "G"}), bindings={"G": 2, "K": 3})
    h = _chain(("fc", {"out": "C_out", "groups": "G"}), bindings={"G": 4, "K": 3})
    assert content_hash(g) == content_hash(h)  # as drawn: the same words, different bindings
    assert content_hash(_fix_group_count(g)) != content_hash(_fix_group_count(h))


def test_canvas_shape_rule_one_dynamic_variable_per_tensor():
    two = _chain(("fc", {"out": "x1*x2", "groups": "1"}), ("fc", {"out": "C_out", "groups": "1"}))
    one = _chain(("fc", {"out": "x1", "groups": "1"}), ("fc", {"out": "C_out", "groups": "1"}))
    assert not _one_dynamic_per_tensor(infer_shapes(two), two.kinds())
    assert _one_dynamic_per_tensor(infer_shapes(one), one.kinds())


@pytest.mark.parametrize(
    ("op", "params", "source_op", "source_params", "same_source", "pruned"),
    [
        ("broadcast", {"fn": "sub"}, None, None, True, True),  # x - x
        ("broadcast", {"fn": "max"}, None, None, True, True),  # max(x, x)
        ("broadcast", {"fn": "add"}, None, None, True, False),  # x + x = 2x: a scale, kept
        ("elementwise", {"fn": "relu"}, "elementwise", {"fn": "abs"}, False, True),
        ("elementwise", {"fn": "abs"}, "elementwise", {"fn": "relu"}, False, True),
        ("elementwise", {"fn": "relu"}, "elementwise", {"fn": "tanh"}, False, False),
        ("elementwise", {"fn": "neg"}, "elementwise", {"fn": "neg"}, False, True),
    ],
)
def test_canvas_prunes_constructions_that_add_nothing(conv, op, params, source_op, source_params, same_source, pruned):
    sampler = CanvasSampler(conv, Budget(), seed=0)
    g = _chain((source_op, source_params)) if source_op else _chain(("elementwise", {"fn": "tanh"}))
    sources = ["n0", "n0"] if same_source else ["n0"]
    assert sampler._redundant(g, op, params, sources) is pruned
