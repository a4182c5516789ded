"""Operators whose TVM lowering once disagreed with their torch module, found by running
searches; each is the searched candidate cut down to the fewest primitives that still
disagreed. Plus a differential check of a fixed sample of Syno MCTS candidates, so the
next lowering bug of this kind shows up here rather than as a NumericalMismatch in a search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.ir.serialize import graph_from_document
from core.search.base import Budget
from core.search.mcts import SynoMCTS
from tests.core.tvm_checks import assert_same, blocks, run_both
from tests.support import EXAMPLES, chain

DATA = Path(__file__).parent / "data"

pytestmark = pytest.mark.tvm

SIZES = {"C": 4, "H": 5, "W": 6, "s": 2}

# Two rolls composed lazily were floormod(floormod(h + a, H) + b, H), which TVM 0.27's iter-map
# simplifier (FlattenBuffer, on every build) rewrote with one of the offsets dropped: a shift lost.
ROLLS = {
    # MCTS over conv2d (seed 0) proposed share -> reduce -> shift(H, -1) -> split -> shift(H, +1)
    # -> expand -> merge -> reduce; the two shifts alone still disagreed (TVM rolled by one).
    "roll_of_a_roll": (
        ["C", "H", "W"],
        [("a", "shift", {"dim": 1, "amount": -1}, ["input"]), ("b", "shift", {"dim": 1, "amount": 1}, ["a"])],
    ),
    "rolls_add_up": (
        ["C", "H", "W"],
        [("a", "shift", {"dim": 1, "amount": 1}, ["input"]), ("b", "shift", {"dim": 1, "amount": 2}, ["a"])],
    ),
    # W rolled, split into [W/s, s], the inner axis rolled, merged back
    "roll_of_a_split_roll": (
        ["C", "H", "W"],
        [
            ("a", "shift", {"dim": 2, "amount": 1}, ["input"]),
            ("sp", "split", {"dim": 2, "B": "s"}, ["a"]),
            ("b", "shift", {"dim": 3, "amount": 1}, ["sp"]),
            ("m", "merge", {"dim": 2}, ["b"]),
        ],
    ),
}


@pytest.mark.parametrize("name", ROLLS)
def test_composed_rolls_match_torch(name):
    out, steps = ROLLS[name]
    got, want, _ = run_both(chain(["C", "H", "W"], out, steps, bindings=SIZES))
    assert_same(got, want)


def test_searched_operator_with_two_rolls_matches_torch():
    """The MCTS candidate itself: the rolls cancel, so no roll stage is left."""
    g = chain(
        ["C", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("n0", "share", {"dims": [0], "out": "C_out"}, ["input"]),
            ("n1", "reduce", {"dim": 1}, ["n0"]),
            ("n2", "shift", {"dim": 1, "amount": -1}, ["n1"]),
            ("n3", "split", {"dim": 0, "B": "s"}, ["n2"]),
            ("n4", "shift", {"dim": 2, "amount": 1}, ["n3"]),
            ("n5", "expand", {"dim": 0, "size": "s"}, ["n4"]),
            ("n6", "merge", {"dim": 1}, ["n5"]),
            ("n7", "reduce", {"dim": 0}, ["n6"]),
        ],
        bindings={**SIZES, "C_out": 4},
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["n0", "n7"]


def test_a_roll_is_a_stage_of_its_root_and_reads_the_wrap_without_a_modulo():
    g = chain(
        ["C", "H", "W"],
        ["H", "W"],
        [
            ("a", "shift", {"dim": 1, "amount": 2}, ["input"]),
            ("sp", "split", {"dim": 0, "B": "s"}, ["a"]),
            ("m", "merge", {"dim": 0}, ["sp"]),
            ("r", "reduce", {"dim": 0}, ["m"]),
        ],
        bindings=SIZES,
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["roll_x", "r"]
    assert "%" not in script  # a tiled floormod was simplified as if it never wrapped


def test_sampled_mcts_candidates_match_torch():
    """Twelve Syno MCTS candidates over conv2d (seed 1: the sixth once disagreed), at small sizes."""
    template = graph_from_document(json.loads((EXAMPLES / "conv2d.json").read_text()))
    search = SynoMCTS(template, Budget(), seed=1)
    candidates = [c for _ in range(12) for c in search.ask(1)]
    assert len(candidates) == 12
    small = {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "g": 2}  # g=8 would need 64 channels for C_in/g^2
    for c in candidates:
        got, want, _ = run_both(c.graph, {**c.graph.bindings, **small}, batch=1)
        assert got.shape == want.shape, c.key
        assert np.allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max()))), c.key


def test_padding_computed_under_a_tile_of_the_stage_it_pads_is_whole_or_refused():
    """MetaSchedule computes a padding stage under a tile of the stage it pads (reverse_compute_at),
    which computes only the elements whose reads fall in the tile: a zero of the border that read
    outside the padded stage was never computed, and 17 of 32 tuned schedules of a searched
    operator (a contraction, then an even window over it) gave garbage. The border now reads a
    clamped element, so the primitive either computes every element or refuses."""
    from tvm import s_tir

    from core.codegen.to_tvm import lower

    graph = chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("e", "expand", {"dim": 1, "size": "s"}, ["input"]),
            ("c", "share", {"dims": [0, 1], "out": "C_out"}, ["e"]),
            ("r", "reduce", {"dim": 1}, ["c"]),
            ("u", "unfold", {"K": "s", "dim": 3}, ["r"]),
            ("t", "reduce", {"dim": 1}, ["u"]),
            ("v", "reduce", {"dim": 1}, ["t"]),
        ],
    )
    lowered = lower(graph, {"C_in": 4, "C_out": 4, "H": 3, "W": 12, "s": 2}, 1)
    run = _runner(lowered, (1, 4, 3, 12))

    sch = s_tir.Schedule(lowered.module())
    (pad,) = [b for b in sch.get_child_blocks(sch.get_sblock("root")) if sch.get(b).name_hint.startswith("pad_")]
    (producer,) = sch.get_producers(pad)
    outer, _ = sch.split(sch.get_loops(producer)[-2], factors=[None, 4])  # a tile of the padded axis
    try:
        sch.reverse_compute_at(pad, outer)
    except Exception:  # TVM refuses the clamped read: nothing to compute wrong
        return
    np.testing.assert_allclose(run(sch.mod), run(lowered.module()), atol=1e-4)


def test_a_tuned_schedule_that_inlines_a_roll_into_a_tiled_loop_still_wraps():
    """A tuning record of a searched operator (a roll inlined into the contraction after it, the
    rolled axis tiled and vectorised; tests/core/data/tuned_roll_trace.json, replayed as it was
    found): TVM simplified the roll's floormod(w + 1, W) as if it never wrapped, so the last
    column read past the row (error 55). Without a modulo the wrap stays right."""
    from tvm import s_tir

    from core.codegen.to_tvm import lower

    graph = chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("n0", "expand", {"dim": 1, "size": "s"}, ["input"]),
            ("n1", "shift", {"amount": -1, "dim": 3}, ["n0"]),
            ("n2", "share", {"dims": [0, 1], "out": "C_out"}, ["n1"]),
            ("n3", "reduce", {"dim": 1}, ["n2"]),
            ("n4", "unfold", {"K": "s", "dim": 3}, ["n3"]),
            ("n5", "reduce", {"dim": 1}, ["n4"]),
            ("n6", "reduce", {"dim": 1}, ["n5"]),
        ],
    )  # the node names are the stage names the trace refers to
    lowered = lower(graph, {"C_in": 64, "C_out": 64, "H": 32, "W": 32, "s": 2}, 1)
    run = _runner(lowered, (1, 64, 32, 32))

    sch = s_tir.Schedule(lowered.module())
    s_tir.Trace.apply_json_to_schedule(json.loads((DATA / "tuned_roll_trace.json").read_text()), sch)
    np.testing.assert_allclose(run(sch.mod), run(lowered.module()), atol=1e-3)


def _runner(lowered, input_shape):
    """Run a module of the lowered operator's PrimFunc (scheduled or not) on fixed random inputs."""
    import tvm

    from core.compile.target import local_target

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in [input_shape] + [w.shape for w in lowered.weights]]

    def run(mod):
        out = tvm.runtime.empty(lowered.output_shape, "float32", tvm.cpu())
        tvm.compile(mod, target=local_target(1))["main"](*(tvm.runtime.tensor(a) for a in args), out)
        return out.numpy()

    return run
