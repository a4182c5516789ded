"""TVM: the s_tir schedule built from a sequence compiles and matches the untransformed nest,
and the tensor expression of a transformed nest computes what the IR's torch module computes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.analysis.legality import check_sequence
from core.codegen import CodegenError, weight_names
from core.codegen.loopnest_ir import result_operator
from core.codegen.loopnest_torch import operator_module
from core.codegen.loopnest_tvm import build_expression, schedule, sequence_tvmscript
from core.compile.sequence_verify import compile_module, random_inputs, run, verify_sequence
from core.ir.sequence import Sequence, load_sequence, make_step, sequence_document
from tests.support import EXAMPLES

pytestmark = pytest.mark.tvm
SMALL = {"C_in": 8, "C_out": 16, "H": 8, "W": 8, "K": 3}
SEQUENCES = sorted((EXAMPLES / "sequences").glob("seq_*.json"))


def matches(result: dict) -> bool:
    return result["max_abs_error"] <= 1e-4 * max(1.0, result["scale"])


@pytest.mark.parametrize("path", SEQUENCES, ids=[p.stem for p in SEQUENCES])
def test_example_schedules_compile_and_match_the_untransformed_nest(path):
    sizes = {**SMALL, "C_out": 24} if "unroll" in path.stem else SMALL
    result = verify_sequence(sequence_document(load_sequence(path)), sizes, batch=2)
    assert matches(result), result
    assert result["output_shape"] == [2, sizes["C_out"], 8, 8]


def test_reduction_tiling_with_reassociation():
    """The hand schedule's shape (docs/tvm.md): reduction split and moved inside the window loops."""
    steps = (
        make_step("split", {"loop": "co", "factor": 8}),
        make_step("split", {"loop": "ci", "factor": 4}),
        make_step("split", {"loop": "ow", "factor": 4}),
        make_step("reorder", {"loops": ["co_o", "oh", "ow_o", "ci_o", "kh", "kw", "ci_i", "co_i", "ow_i"]}),
        make_step("parallel", {"loop": "co_o"}),
        make_step("unroll", {"loop": "co_i"}),
        make_step("vectorize", {"loop": "ow_i"}),
    )
    strict = Sequence("conv2d", steps, SMALL)
    with pytest.raises(CodegenError, match=r"step 4 \(illegal\): reorder.*carried by loop ci_i"):
        schedule(check_sequence(strict))
    result = verify_sequence(sequence_document(Sequence("conv2d", steps, SMALL, reassociate=True)))
    assert matches(result) and result["max_abs_error"] > 0  # the sum really was reordered
    for primitive in ("split", "reorder", "parallel", "unroll", "vectorize"):
        assert f"sch.{primitive}(" in result["trace"]


def test_prefetch_lowers_to_llvm_prefetch_calls_and_changes_no_value():
    """s_tir has no prefetch primitive: the marked loops start with llvm.prefetch of the input
    their next iteration reads first, and the built kernel computes what the nest computes."""
    steps = (
        make_step("group", {"loops": ["ow", "kw"], "G": 2}),
        make_step("fuse", {"loops": ["kh", "kw"]}),
        make_step("prefetch", {"loop": "ci"}),
        make_step("prefetch", {"loop": "kh_kw"}),
        make_step("parallel", {"loop": "co"}),
    )
    seq = Sequence("conv2d", steps, SMALL)
    assert [s.status for s in check_sequence(seq).steps] == ["legal"] * 5
    document = sequence_document(seq)
    result = verify_sequence(document, batch=2)
    assert matches(result) and result["prefetches"] == 2
    scheduled = schedule(check_sequence(seq)).module
    text = scheduled.script()
    assert text.count('T.call_llvm_intrin("void", "llvm.prefetch"') == 2
    assert "I_pad[0, T.min(ci + 1, 7), 0, 0]" in text  # the next input channel's first read
    executable = compile_module(scheduled)
    assert "call void @llvm.prefetch" in executable.mod.inspect_source("ll")


def test_tvmscript_shows_the_schedule():
    text = sequence_tvmscript(sequence_document(load_sequence(EXAMPLES / "sequences" / "seq_schedule.json")), SMALL)
    assert "T.parallel(" in text and "T.vectorized(8)" in text and "T.unroll(8)" in text
    assert 'T.sblock("O")' in text


@pytest.mark.parametrize(
    "steps",
    [
        [("group", {"loops": ["co", "ci"], "G": 4}), ("interchange", {"loops": ["ci", "ow"]})],
        [
            ("bottleneck", {"loop": "co", "B": 2}),
            ("bottleneck", {"loop": "ci", "B": 2}),
            ("bottleneck", {"loop": "oh", "B": 2}),
            ("split", {"loop": "ow", "factor": 4}),
        ],
        [
            ("group", {"loops": ["oh", "kh"], "G": 2}),
            ("group", {"loops": ["ow", "kw"], "G": 4}),
            ("bottleneck", {"loop": "kh", "B": 3}),
            ("bottleneck", {"loop": "oh", "B": 2}),
        ],
        [
            ("peel", {"loop": "co", "at": 4}),
            ("bottleneck", {"loop": "ow", "B": 2}),
            ("group", {"loops": ["co", "ci"], "G": 2}),
        ],
    ],
)
def test_tensor_expression_equals_the_torch_module_with_the_same_weights(steps):
    r = check_sequence(Sequence("conv2d", tuple(make_step(*s) for s in steps), SMALL))
    scheduled = schedule(r, batch=2).module
    args, _ = build_expression(r.final, batch=2)
    inputs = random_inputs(args, seed=1)
    got = run(compile_module(scheduled), inputs, tuple(int(s) for s in args[-1].shape))
    op = result_operator(r.final)
    module = operator_module(op)
    with torch.no_grad():  # one contraction per part, in part order (a peeled nest's are joined by concat)
        for name, w in zip(weight_names(op.graph).values(), inputs[1:], strict=True):
            module.get_parameter(name).copy_(torch.from_numpy(w.reshape(w.shape[0], -1)))
        want = module(torch.from_numpy(inputs[0])).numpy()
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)


def test_dense_schedule():
    seq = Sequence(
        "dense",
        (
            make_step("group", {"loops": ["co", "ci"], "G": 2}),
            make_step("split", {"loop": "co", "factor": 4}),
            make_step("parallel", {"loop": "g"}),
            make_step("unroll", {"loop": "ci"}),
        ),
        {"C_in": 16, "C_out": 16},
    )
    assert matches(verify_sequence(sequence_document(seq), batch=3))


def test_only_legal_sequences_get_a_schedule():
    bad = Sequence("conv2d", (make_step("parallel", {"loop": "kh"}),), SMALL)
    with pytest.raises(CodegenError, match=r"step 1 \(illegal\): parallel\(kh\) would .*loop kh carries"):
        verify_sequence(sequence_document(bad))
