"""The random sequence search (NAS-PTE) behind the common ask/tell interface."""

from __future__ import annotations

import pytest

from core.analysis.legality import check_sequence
from core.codegen.loopnest_ir import result_operator
from core.ir.sequence import sequence_from_document
from core.ir.serialize import content_hash, load_operator, to_document
from core.search.base import Budget, SearchError
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

    judge = CapacityJudge(EvalSettings(width=8, resolution=16, limit=200, fisher_batch=32))
    search = SequenceSearch(conv2d, seed=5, screen=judge)
    survivors = search.ask(8)  # with this seed the 8th distinct operator (two group steps) is rejected
    assert survivors and all(c.info["fisher"]["passes"] for c in survivors)
    assert all(c.info["fisher"]["candidate"] >= c.info["fisher"]["original"] for c in survivors)
    assert search.stats["fisher_rejected"] > 0
