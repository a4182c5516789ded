"""Legality: the accumulation dependences of a nest, reorders judged by the polyhedral rule
with the reversed dependence named, parallel/vectorize, steps that cannot be applied, and
the Fisher Potential rule for architecture-changing steps on a real backbone."""

from __future__ import annotations

import pytest

from core.analysis.legality import ERROR, ILLEGAL, LEGAL, check_sequence, dependences
from core.ir.sequence import Sequence, apply_sequence, make_step

SIZES = {"C_in": 16, "C_out": 16, "H": 8, "W": 8, "K": 3}


def report(*steps, reassociate=False, sizes=SIZES):
    return check_sequence(
        Sequence("conv2d", tuple(make_step(op, p) for op, p in steps), sizes, reassociate=reassociate)
    )


def verdicts(r):
    return [(s.status, s.kind) for s in r.steps]


def test_conv2d_dependences_are_the_accumulations():
    deps = dependences(apply_sequence(Sequence("conv2d", (), SIZES)).parts[0])
    assert [(d.carrier, d.text()) for d in deps] == [
        ("ci", "(0, +, 0, 0, *, *) over (co, ci, oh, ow, kh, kw)"),
        ("kh", "(0, 0, 0, 0, +, *) over (co, ci, oh, ow, kh, kw)"),
        ("kw", "(0, 0, 0, 0, 0, +) over (co, ci, oh, ow, kh, kw)"),
    ]
    assert {d.array for d in deps} == {"O[co, oh, ow]"}


def test_reorder_reversing_the_accumulation_is_rejected_with_the_dependence_named():
    r = report(("reorder", {"loops": ["kw", "co"]}))
    (step,) = r.steps
    assert (step.status, step.kind) == (ILLEGAL, "dependence")
    assert step.message.startswith(
        "reorder(kw, co) would reverse the accumulation dependence on O[co, oh, ow] carried by loop ci: "
        "its direction (0, +, 0, 0, *, *) over (co, ci, oh, ow, kh, kw) becomes "
        "(*, +, 0, 0, *, 0) over (kw, ci, oh, ow, kh, co)"
    )
    assert not r.legal and r.final is not None  # illegal steps are applied, and reported


@pytest.mark.parametrize(
    "steps",
    [
        [("interchange", {"loops": ["co", "ow"]})],
        [("reorder", {"loops": ["ow", "oh", "co"]})],
        [("reorder", {"loops": ["ci", "kh", "kw", "co"]})],  # an output loop inside the reductions
        [("tile", {"loops": ["oh", "ow"], "factors": [4, 4]})],
        [("split", {"loop": "ci", "factor": 4}), ("fuse", {"loops": ["kh", "kw"]}), ("unroll", {"loop": "ci_i"})],
        [("fuse", {"loops": ["oh", "ow"]}), ("parallel", {"loop": "oh_ow"})],
    ],
)
def test_reorders_that_keep_every_dependence_are_legal(steps):
    r = report(*steps)
    assert r.legal, r.problems()


@pytest.mark.parametrize(
    "steps, carrier",
    [
        ([("interchange", {"loops": ["ci", "kh"]})], "ci"),
        ([("reorder", {"loops": ["kw", "kh"]})], "kh"),
        ([("split", {"loop": "ci", "factor": 4}), ("interchange", {"loops": ["ci_o", "ci_i"]})], "ci_o"),
        ([("split", {"loop": "ci", "factor": 4}), ("interchange", {"loops": ["ci_i", "kh"]})], "ci_i"),
        ([("tile", {"loops": ["ci", "kw"], "factors": [2, 3]})], "ci"),
    ],
)
def test_reordering_reductions_changes_the_summation_order(steps, carrier):
    r = report(*steps)
    assert verdicts(r)[-1] == (ILLEGAL, "dependence")
    assert f"carried by loop {carrier}:" in r.steps[-1].message
    reassociated = report(*steps, reassociate=True)  # sums may be reassociated: no ordering constraint
    assert reassociated.legal and reassociated.steps[-1].message.startswith("it reorders the sum (it would reverse")


def test_prefetch_is_always_legal_and_marks_its_loop():
    r = report(("prefetch", {"loop": "kh"}), ("interchange", {"loops": ["co", "oh"]}), ("prefetch", {"loop": "co"}))
    assert r.legal and r.steps[0].message == "it only reads ahead into the cache: no value and no order changes"
    assert [l.name for l in r.final.parts[0].loops if l.prefetch] == ["co", "kh"]
    refused = {
        ("split", "kh"): "kh is already marked prefetch; split before marking it",
        ("prefetch", "kh"): "kh already prefetches",
        ("vectorize", "kw"): "kw prefetches; a vector loop runs its iterations at once",
    }
    for (op, loop), message in refused.items():
        params = {"loop": loop, "factor": 3} if op == "split" else {"loop": loop}
        r = report(("prefetch", {"loop": "kh"}), ("prefetch", {"loop": "kw"}), (op, params))
        assert verdicts(r)[-1] == (ERROR, "structure") and message in r.steps[-1].message


def test_parallel_and_vectorize_only_on_loops_that_carry_no_dependence():
    assert report(("parallel", {"loop": "co"}), ("parallel", {"loop": "oh"})).legal
    moved = ("reorder", {"loops": ["kh", "kw", "ow"]})
    assert report(moved, ("vectorize", {"loop": "ow"})).legal
    for reassociate in (False, True):
        r = report(("parallel", {"loop": "ci"}), reassociate=reassociate)
        assert verdicts(r) == [(ILLEGAL, "dependence")]
        assert r.steps[0].message == (
            "parallel(ci) would run iterations that add into the same O[co, oh, ow] at once (on several cores): "
            "loop ci carries the accumulation dependence (0, +, 0, 0, *, *) over (co, ci, oh, ow, kh, kw)"
        )
    r = report(("vectorize", {"loop": "kw"}))
    assert verdicts(r) == [(ILLEGAL, "dependence")] and "(in vector lanes)" in r.steps[0].message
    # a reduction loop of one iteration carries nothing
    assert report(("bottleneck", {"loop": "kw", "B": 3}), ("vectorize", {"loop": "kw"})).legal


def test_architecture_steps_are_judged_on_sizes_here():
    r = report(("group", {"loops": ["co", "ci"], "G": 4}), ("bottleneck", {"loop": "oh", "B": 2}))
    assert r.legal and "Fisher Potential" in r.steps[0].message
    r = report(
        ("split", {"loop": "co", "factor": 4}), ("group", {"loops": ["co_o", "ci"], "G": 3}), ("unroll", {"loop": "kw"})
    )
    assert verdicts(r) == [(LEGAL, ""), (ERROR, "divisibility")]  # stops at the first error
    assert r.steps[-1].message == "group(co_o, ci, 3): co_o has 4 iterations, not divisible by 3 = 3"
    assert r.final is None and r.problems() == [f"step 2 (error): {r.steps[-1].message}"]
    r = report(("fuse", {"loops": ["co", "ow"]}))
    assert verdicts(r) == [(ERROR, "structure")]


@pytest.mark.slow
def test_fisher_potential_accepts_and_rejects_on_a_constructed_case():
    """Width-8 ResNet-18 on the bundled digits: two groups keep the capacity, depthwise (G = C = 8
    in most layers) loses it. Scores are deterministic (seeded weights and minibatch)."""
    from core.codegen.loopnest_ir import result_operator
    from core.train.capacity import CapacityJudge
    from core.train.settings import EvalSettings

    judge = CapacityJudge(EvalSettings(dataset="digits", width=8, resolution=16, limit=200, fisher_batch=32))
    sizes = {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}
    verdict = {}
    for g in (2, 8):
        final = report(("group", {"loops": ["co", "ci"], "G": g}), sizes=sizes).final
        verdict[g] = judge(result_operator(final).graph)
    assert verdict[2]["passes"] and verdict[2]["candidate"] >= verdict[2]["original"] > 0
    assert not verdict[8]["passes"] and verdict[8]["candidate"] < verdict[8]["original"]
    assert verdict[2]["original"] == verdict[8]["original"]  # same layers, same network, same minibatch
    assert "layers.0.conv1" in verdict[8]["replaced"] and "stem.0" not in verdict[8]["replaced"]  # 3 channels
