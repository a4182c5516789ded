"""The random sequence search (NAS-PTE) behind the common ask/tell interface."""

from __future__ import annotations

import pytest

from core.analysis.legality import check_sequence
from core.codegen.loopnest_ir import result_operator
from core.ir.sequence import STEP_PARAMS, apply_step, load_sequence, sequence_document, sequence_from_document, start
from core.ir.serialize import content_hash, load_operator, to_document
from core.ir.symbolic import parse_size
from core.search.base import Budget, SearchError
from core.search.sequence_space import options
from core.search.sequences import SequenceSearch
from tests.support import EXAMPLES


@pytest.fixture
def conv2d():
    return load_operator(EXAMPLES / "conv2d.json")


def test_candidates_are_valid_distinct_in_budget_and_carry_their_sequence(conv2d):
    search = SequenceSearch(conv2d, Budget(flops=0.5), seed=3)
    found = search.ask(12)
    assert len(found) == 12 and len({c.key for c in found}) == 12
    limit = 0.5 * search.limits.reference_flops
    for c in found:
        assert 0 < c.flops <= limit and c.origin == "search:sequences"
        seq = sequence_from_document(c.info["sequence"])
        assert [s.text() for s in seq.steps] == c.info["steps"]
        assert any(s.changes_architecture for s in seq.steps)
        again = result_operator(check_sequence(seq).final, "nas-pte-sample").graph
        assert content_hash(to_document(again)) == c.key
    s = search.stats
    assert s["illegal"] > 0  # random reorders do break the accumulation order
    assert s["tried"] == s["proposed"] + s["invalid"] + s["over_budget"] + s["duplicate"]


def test_samples_reassociate_float_sums_and_say_so(conv2d):
    """NAS-PTE reorders reduction loops of float sums: a sample whose step reverses the
    accumulation order is legal, its verdict says the sum was reordered, and the sequence
    carries reassociate: true; the same steps in the strict order are illegal."""
    search, strict = SequenceSearch(conv2d, seed=0), SequenceSearch(conv2d, seed=0, reassociate=False)
    for _ in range(50):
        seq, same = search.sample(), strict.sample()
        assert seq.steps == same.steps and seq.reassociate and not same.reassociate
        report = check_sequence(seq)
        reordered = [s for s in report.steps if "it reorders the sum" in s.message]
        if report.legal and reordered:
            break
    else:
        pytest.fail("no legal sample reordered a sum in 50")
    assert all(s.status == "legal" for s in reordered) and "legal because the sequence reassociates" in (
        reordered[0].message
    )
    strict_step = check_sequence(same).steps[reordered[0].index]
    assert strict_step.status == "illegal" and "would reverse the accumulation dependence" in strict_step.message
    assert sequence_document(seq)["reassociate"] is True and "reassociated" in seq.description
    found = search.ask(3)
    assert found and all(c.info["sequence"]["reassociate"] is True for c in found)


def test_same_seed_same_candidates(conv2d):
    keys = [[c.key for c in SequenceSearch(conv2d, seed=11).ask(5)] for _ in range(2)]
    assert keys[0] == keys[1]
    assert keys[0] != [c.key for c in SequenceSearch(conv2d, seed=12).ask(5)]


def test_other_nests_and_bad_requests(conv2d):
    dense = SequenceSearch(conv2d, seed=0, nest="dense").sample()
    assert dense.nest == "dense" and dense.bindings == {"C_in": 64, "C_out": 64}
    with pytest.raises(SearchError, match="unknown nest 'conv3d'"):
        SequenceSearch(conv2d, nest="conv3d")
    with pytest.raises(SearchError, match="cannot start a grouped_conv2d nest: grouped_conv2d needs values for G"):
        SequenceSearch(conv2d, nest="grouped_conv2d")


@pytest.mark.slow
def test_fisher_potential_filters_the_candidates(conv2d):
    from core.train.capacity import CapacityJudge
    from core.train.settings import EvalSettings

    judge = CapacityJudge(EvalSettings(dataset="digits", width=8, resolution=16, limit=200, fisher_batch=32))
    search = SequenceSearch(conv2d, seed=5, screen=judge)
    survivors = search.ask(8)  # with this seed the 8th distinct operator (two group steps) is rejected
    assert survivors and all(c.info["fisher"]["passes"] for c in survivors)
    assert all(c.info["fisher"]["candidate"] >= c.info["fisher"]["original"] for c in survivors)
    assert search.stats["fisher_rejected"] > 0


def _published():
    return sorted((EXAMPLES / "sequences").glob("*.json"))


@pytest.mark.parametrize("path", _published(), ids=lambda p: p.stem)
def test_every_published_sequence_lies_in_the_sampled_space(path):
    """At every step of each bundled sequence (NAS-PTE's three among them) the sampler's options
    for that step's kind, on that part, include the step, its factors evaluated at the sizes."""
    seq = load_sequence(path)
    program, _ = start(seq)
    bindings = dict(program.bindings)
    for step in seq.steps:
        nest = program.parts[step.part or 0]
        if step.op == "reorder" and len(step.params["loops"]) > 3:
            # a long reorder (seq_schedule's blocking) is offered as the interchanges that make it
            assert set(step.params["loops"]) <= set(nest.names)
            program, _ = apply_step(program, step)
            continue
        offered = [_evaluated(step.op, o, bindings) for o in options(nest, step.op)]
        assert _evaluated(step.op, step.params, bindings) in offered, f"{path.stem}: {step.text()} is not offered"
        program, _ = apply_step(program, step)


def _evaluated(op, params, bindings):
    """A step's parameters with loop names as lists and factors as numbers at the sizes."""

    def value(kind, v):
        if kind == "loop":
            return v
        if kind in ("loops", "pair"):
            return sorted(v) if op == "interchange" else list(v)  # swapping a and b is swapping b and a
        if kind == "size":
            return parse_size(str(v)).to_int(bindings)
        return [parse_size(str(f)).to_int(bindings) for f in v]

    return {name: value(kind, params[name]) for name, kind in STEP_PARAMS[op].items()}


def test_samples_reach_every_kind_of_step_and_the_parts_of_a_peel(conv2d):
    search = SequenceSearch(conv2d, seed=1)
    steps = [s for _ in range(300) for s in search.sample().steps]
    assert {s.op for s in steps} == set(STEP_PARAMS)
    assert any(s.part is not None for s in steps)  # a step on one part after a peel
