"""Loop nests: the starting nests, each transformation's effect and its errors, the
invariants every transformed nest keeps, and the pseudo-code printer."""

from __future__ import annotations

import itertools
from math import prod

import pytest

from core.codegen.loopnest_text import program_text
from core.ir.loopnest import DivisibilityError, LoopNestError
from core.ir.sequence import Sequence, apply_sequence, make_step
from core.ir.serialize import load_operator
from core.search.sequences import SequenceSearch
from tests.support import EXAMPLES

SIZES = {"C_in": 16, "C_out": 32, "H": 8, "W": 12, "K": 3}


def program(*steps, nest="conv2d", sizes=SIZES):
    return apply_sequence(Sequence(nest, tuple(make_step(op, params) for op, params in steps), sizes))


def layout(prog, part=0):
    return [(l.name, l.extent) for l in prog.parts[part].loops]


def test_starting_nests():
    assert layout(program()) == [("co", 32), ("ci", 16), ("oh", 8), ("ow", 12), ("kh", 3), ("kw", 3)]
    assert layout(program(nest="dense", sizes={"C_in": 5, "C_out": 7})) == [("co", 7), ("ci", 5)]
    grouped = program(nest="grouped_conv2d", sizes={**SIZES, "G": 4})
    assert layout(grouped)[:3] == [("g", 4), ("co", 8), ("ci", 4)]


def test_split_fuse_reorder_tile_and_annotations():
    p = program(
        ("split", {"loop": "co", "factor": 8}),
        ("fuse", {"loops": ["oh", "ow"]}),
        ("interchange", {"loops": ["co_o", "kw"]}),
        ("vectorize", {"loop": "co_o"}),
    )
    assert layout(p) == [("kw", 3), ("co_i", 8), ("ci", 16), ("oh_ow", 96), ("kh", 3), ("co_o", 4)]
    assert p.parts[0].loops[-1].annotation == "vectorize"
    t = program(("tile", {"loops": ["oh", "ow"], "factors": [2, 4]}))
    assert [n for n, _ in layout(t)] == ["co", "ci", "oh_o", "ow_o", "oh_i", "ow_i", "kh", "kw"]
    r = program(("reorder", {"loops": ["kw", "ow", "co"]}))
    assert [n for n, _ in layout(r)] == ["kw", "ci", "oh", "ow", "kh", "co"]


@pytest.mark.parametrize(
    "step, message",
    [
        (("split", {"loop": "cx", "factor": 2}), "no loop named 'cx' (loops: co, ci, oh, ow, kh, kw)"),
        (("fuse", {"loops": ["co", "oh"]}), "oh must come right after co to fuse them"),
        (("fuse", {"loops": ["ow", "kh"]}), "not both output loops or both reduction loops"),
        (("vectorize", {"loop": "ow"}), "only the innermost loop (kw) can be vectorized"),
        (
            ("group", {"loops": ["co", "kh"], "G": 2}),
            "co is grouped with the input it reads through ci; name a loop over ci, not kh",
        ),
        (("group", {"loops": ["oh", "ci"], "G": 2}), "name a loop over kh, not ci"),
        (("bottleneck", {"loop": "co", "B": "Q"}), "no value for Q"),
        (("group", {"loops": ["co", "ci"], "G": "C_out"}), "C_out divides the channels, so it must be a number"),
    ],
)
def test_structural_errors_name_the_problem(step, message):
    with pytest.raises(LoopNestError) as e:
        program(step)
    assert message in str(e.value) and "step 1" in str(e.value)


@pytest.mark.parametrize(
    "step, message",
    [
        (("split", {"loop": "ow", "factor": 5}), "ow has 12 iterations, not divisible by 5"),
        (("bottleneck", {"loop": "kh", "B": 2}), "kh has 3 iterations, not divisible by 2 = 2"),
        (("group", {"loops": ["co", "ci"], "G": 32}), "ci has 16 iterations, not divisible by 32 = 32"),
        (("peel", {"loop": "co", "at": 40}), "cannot peel 32 output channels at 40"),
    ],
)
def test_sizes_that_do_not_divide(step, message):
    with pytest.raises(DivisibilityError, match=message):
        program(step)


def test_architecture_steps_need_the_outermost_whole_piece():
    with pytest.raises(LoopNestError, match="co_i is an inner piece of co"):
        program(("split", {"loop": "co", "factor": 4}), ("bottleneck", {"loop": "co_i", "B": 2}))
    with pytest.raises(LoopNestError, match="oh_ow is a fused loop"):
        program(("fuse", {"loops": ["oh", "ow"]}), ("bottleneck", {"loop": "oh_ow", "B": 2}))
    with pytest.raises(LoopNestError, match="co is already grouped"):
        program(("group", {"loops": ["co", "ci"], "G": 2}), ("group", {"loops": ["co", "ci"], "G": 2}))
    with pytest.raises(LoopNestError, match="peel the output channels before grouping"):
        program(("group", {"loops": ["co", "ci"], "G": 2}), ("peel", {"loop": "co", "at": 8}))


def test_architecture_steps_change_extents_and_computation():
    p = program(
        ("split", {"loop": "co", "factor": 4}),
        ("bottleneck", {"loop": "co_o", "B": 2}),
        ("group", {"loops": ["co_o", "ci"], "G": 2}),
        ("bottleneck", {"loop": "kw", "B": 3}),
    )
    assert layout(p) == [("g", 2), ("co_o", 2), ("co_i", 4), ("ci", 8), ("oh", 8), ("ow", 12), ("kh", 3), ("kw", 1)]
    c = p.parts[0].comp
    assert c.computed_channels == 16 and c.extents()["co"] == 8 and c.window("kw") == 1
    assert (
        c.accesses().statement == "Y[g*8 + co, oh, ow] += W[g*8 + co, ci, kh, kw] * I[g*8 + ci, oh + kh - 1, ow + kw]"
    )


def test_peel_makes_parts_that_steps_can_target():
    p = apply_sequence(
        Sequence(
            "conv2d",
            (
                make_step("peel", {"loop": "co", "at": 8}),
                make_step("group", {"loops": ["co", "ci"], "G": 4}, part=1),
                make_step("interchange", {"loops": ["ci", "oh"]}),
            ),
            SIZES,
        )
    )
    assert [(n.comp.out_start, n.comp.out_count) for n in p.parts] == [(0, 8), (8, 24)]
    assert [n for n, _ in layout(p, 0)] == ["co", "oh", "ci", "ow", "kh", "kw"]
    assert layout(p, 1)[:4] == [("g", 4), ("co", 6), ("oh", 8), ("ci", 4)]
    with pytest.raises(LoopNestError, match="there is no part 2"):
        apply_sequence(
            Sequence(
                "conv2d",
                (make_step("peel", {"loop": "co", "at": 8}), make_step("unroll", {"loop": "co"}, part=2)),
                SIZES,
            )
        )


def test_pieces_always_cover_each_iterator_exactly():
    """On random sequences: the pieces of every iterator multiply to its extent, with distinct strides."""
    search = SequenceSearch(load_operator(EXAMPLES / "conv2d.json"), seed=7)
    for _ in range(150):
        nest = apply_sequence(search.sample()).parts[0]
        for iterator, extent in nest.comp.extents().items():
            pieces = nest.pieces_of(iterator)
            assert prod(p.extent for p in pieces) == extent, (iterator, nest.loops)
            strides = sorted((p.stride, p.extent) for p in pieces)
            for (s, e), (s2, _) in itertools.pairwise(strides):
                assert s * e == s2  # pieces tile the iterator's range without gaps or overlaps


def test_pseudo_code():
    text = program_text(
        program(
            ("split", {"loop": "co", "factor": 8}),
            ("bottleneck", {"loop": "ow", "B": 2}),
            ("fuse", {"loops": ["oh", "ow"]}),
            ("parallel", {"loop": "co_o"}),
        )
    )
    assert text.splitlines() == [
        "# conv2d at C_in=16, C_out=32, H=8, K=3, W=12",
        "for co_o in parallel(4):",
        "  for co_i in range(8):",
        "    for ci in range(16):",
        "      for oh_ow in range(48):",
        "        for kh in range(3):",
        "          for kw in range(3):",
        "            co = co_o*8 + co_i",
        "            oh = oh_ow // 6",
        "            ow = oh_ow % 6",
        "            Y[co, oh, ow] += W[co, ci, kh, kw] * I[ci, oh + kh - 1, ow*2 + kw - 1]",
        "O[c, y, x] = Y[c, y, x // 2]  # for every output element: each computed value is repeated",
    ]


def test_pseudo_code_of_parts_and_strips():
    text = program_text(
        apply_sequence(
            Sequence(
                "conv2d",
                (
                    make_step("peel", {"loop": "co", "at": 8}),
                    make_step("group", {"loops": ["oh", "kh"], "G": 2}, part=1),
                ),
                SIZES,
            )
        )
    )
    assert "# part 0: output channels 0..7" in text and "# part 1: output channels 8..31" in text
    assert (
        "O[8 + co, gh*4 + oh, ow] += W1[co, ci, kh, kw] * I[ci, gh*4 + oh + kh - 1, ow + kw - 1]"
        "  # reads stay in strip gh of 4 rows, else 0"
    ) in text
