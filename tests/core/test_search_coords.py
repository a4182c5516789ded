"""Coordinate expressions: Syno's term rewriting, the approximate rule for large split
factors, and canonical forms that equal chains share and different chains do not."""

import pytest

from core.ir.serialize import load_operator
from core.ir.symbolic import Size, parse_size
from core.search.base import Budget
from core.search.chain import Step
from core.search.coords import Algebra, absorbed, lin, var, weight_coords
from core.search.syno import SynoRandom
from tests.support import EXAMPLES

S = Step.of
KINDS = {}  # default kinds: C, C_in, H, W primary; K, s, B coefficients


def v(name, size):
    return var(name, parse_size(size))


def _divmod(e, b):
    fired, approx = [], []
    return Algebra(KINDS).divmod(e, parse_size(b), fired, approx), fired, approx


def test_merge_of_a_split_is_rewritten():
    i, j = v("i", "C"), v("j", "B")
    (q, r), fired, _ = _divmod(lin([(parse_size("B"), i), (Size(1), j)]), "B")
    assert (q, r) == (i, j) and fired == ["merge_of_split"]


def test_syno_rule_for_a_coarser_merge():
    """[(C*i+j)/(B*C), (C*i+j)%(B*C)] -> [i/B, C*(i%B)+j] when j < C."""
    i, j = v("i", "H"), v("j", "C")
    (q, r), fired, _ = _divmod(lin([(parse_size("C"), i), (Size(1), j)]), "B*C")
    assert q == ("/", i, parse_size("B"))
    assert r == lin([(parse_size("C"), ("%", i, parse_size("B"))), (Size(1), j)])
    assert fired == ["merge_of_split"]


def test_a_regrouping_merge_is_left_alone():
    """[C_in, s] merged and split by C_in into [s, C_in]: s is no multiple of C_in, no rewrite."""
    i, j = v("i", "s"), v("j", "C_in")
    (q, r), fired, approx = _divmod(lin([(parse_size("C_in"), i), (Size(1), j)]), "s")
    assert q[0] == "/" and r[0] == "%" and not fired and not approx


def test_unrelated_merge_is_left_alone():
    (q, r), fired, approx = _divmod(v("i", "C"), "B")
    assert q[0] == "/" and r[0] == "%" and not fired and not approx


def test_approximate_rule_when_the_split_factor_is_much_larger_than_the_window():
    """(C*i + j + k) / C ~ i when C (primary) >> K: exact only without the small k."""
    i, j, k = v("i", "H"), v("j", "C"), v("k", "K")
    (q, r), fired, approx = _divmod(lin([(parse_size("C"), i), (Size(1), j), (Size(1), k)]), "C")
    assert q == i and r == lin([(Size(1), j), (Size(1), k)])
    assert approx == ["merge_of_split_approx"] and not fired
    (q, _), _, approx = _divmod(lin([(parse_size("s"), i), (Size(1), j), (Size(1), k)]), "s")  # s is small
    assert q[0] == "/" and not approx


def test_weights_absorb_what_changes_no_function():
    """A weight summed over an axis only it reads is any weight of its other axes; a weight whose
    coordinates another has is absorbed by it; a mixed-radix coordinate is its digits, and the
    digits [e / B, e % B] together are e (both one-to-one relabellings of entries)."""
    o, i, j = v("o0", "C_out"), v("r0", "C_in"), v("r1", "s")
    reductions = {"r0": "r?", "r1": "r?"}
    assert absorbed((i,), [(o, i, j)], reductions) == [weight_coords((o, i))]
    assert absorbed((i,), [(o, i), (i,)], reductions) == [weight_coords((o, i))]
    assert absorbed((i, j), [(o, i, j), (o, j)], reductions) == [weight_coords((o, i, j))]
    assert weight_coords([lin([(parse_size("s"), i), (Size(1), j)])]) == weight_coords((i, j))
    b = parse_size("s")
    assert weight_coords([("/", i, b), ("%", i, b), o]) == weight_coords((i, o))
    assert weight_coords([("/", i, b), o]) != weight_coords((i, o))  # one digit ties entries


@pytest.fixture(scope="module")
def space():
    template = load_operator(EXAMPLES / "conv2d.json")
    return SynoRandom(template, Budget(max_primitives=7), seed=0, use_canonical=False).space


CONV = (S("reduce", dim=0), S("share", dims=(0,), out="C_out"))  # a 1x1 convolution, bottom-up


@pytest.mark.parametrize(
    "chain,rewrite",
    [
        ((S("shift", dim=1, amount=1), S("shift", dim=1, amount=-1), *CONV), "rolls_cancel"),
        ((S("shift", dim=1, amount=1), S("shift", dim=1, amount=1), *CONV), None),  # a roll by 2
        ((S("reduce", dim=0), S("expand", dim=0, size="K"), *CONV), "expand_reduced"),
        (
            (
                S("reduce", dim=0),
                S("reduce", dim=0),
                S("share", dims=(0,), out="C_out"),
                S("share", dims=(0,), out="C_in"),
            ),
            None,
        ),
    ],
)
def test_rewrites_name_redundant_chains(space, chain, rewrite):
    coords = space.coords_of(chain)
    assert (coords.rewrites[:1] or [None])[0] == rewrite


def test_two_rolls_one_way_are_a_roll_by_two(space):
    """Not one shift (the issue's reviewer found 293 such chains dropped): a different function."""
    twice = (S("shift", dim=1, amount=1), S("shift", dim=1, amount=1), *CONV)
    assert space.form(twice) != space.form(twice[1:])
    assert space.coords_of(twice).coords[1] == ("roll", v("o1", "H"), -2, parse_size("H"))


def test_canonical_forms_are_shared_by_equal_chains_only(space):
    roll_then_sum = (S("shift", dim=2, amount=1), *CONV)
    sum_then_roll = (*CONV[:1], S("shift", dim=3, amount=1), *CONV[1:])
    assert space.form(roll_then_sum) == space.form(sum_then_roll)
    assert space.form(roll_then_sum) != space.form((S("shift", dim=2, amount=-1), *CONV))
    assert space.form(CONV) != space.form((S("reduce", dim=1), S("share", dims=(0,), out="C_out")))
    # a 1-D convolution: which of C_in and the window is summed first does not matter
    window = (S("share", dims=(0, 1), out="C_out"), S("unfold", dim=1, K="K"))
    a = (S("reduce", dim=1), S("reduce", dim=1), *window)
    b = (S("reduce", dim=1), S("reduce", dim=2), *window)
    assert space.form(a) == space.form(b)
