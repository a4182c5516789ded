from fractions import Fraction

import pytest

from core.ir.bindings import parse_bindings
from core.ir.errors import BindingError, SizeError
from core.ir.symbolic import Poly, Size, VarKind, default_kind, divisor_monomials, parse_size


def test_parse_and_print_round_trip():
    for text in ["C_in*K^2/G", "2*C", "C/2", "1", "H*W", "x1/G", "C_out*C_in*K^2"]:
        s = parse_size(text)
        assert parse_size(str(s)) == s


def test_arithmetic_is_exact():
    c, g, k = parse_size("C"), parse_size("G"), parse_size("K")
    assert (c / g) * g == c
    assert c * k / k == c
    assert (c / g) * (g / c) == Size(1)
    assert (k**2) == parse_size("K^2")
    assert str(parse_size("2*C") / 4) == "C/2"
    assert parse_size("6") / 4 == Size(Fraction(3, 2))


@pytest.mark.parametrize("bad", ["", "C +", "C**2", "3C", "C/0", "a.b", "__import__('os')", "C^x"])
def test_parse_rejects_garbage(bad):
    with pytest.raises(SizeError):
        parse_size(bad)


def test_substitution_gives_integers_or_clear_error():
    s = parse_size("C_in/G")
    assert s.to_int({"C_in": 64, "G": 4}) == 16
    with pytest.raises(BindingError, match=r"C_in/G = 64/3 is not an integer"):
        s.to_int({"C_in": 64, "G": 3})
    with pytest.raises(BindingError, match="no value for G"):
        s.to_int({"C_in": 64})


def test_variable_kinds_and_denominators():
    assert default_kind("C_in") is VarKind.PRIMARY
    assert default_kind("H") is VarKind.PRIMARY
    assert default_kind("K") is VarKind.COEFFICIENT
    assert default_kind("x3") is VarKind.DYNAMIC
    assert parse_size("C/G").divisor_blockers({}) == []
    assert parse_size("G/C").divisor_blockers({}) == ["C"]
    assert parse_size("K/x1").divisor_blockers({}) == ["x1"]
    # a declared kind overrides the naming convention
    assert parse_size("K/Cx").divisor_blockers({"Cx": VarKind.COEFFICIENT}) == []


def test_divisor_monomials():
    assert [str(s) for s in divisor_monomials(parse_size("x2*K_W"))] == ["1", "K_W", "x2", "K_W*x2"]
    assert len(divisor_monomials(parse_size("C*K^2"))) == 6


def test_poly_sums_like_terms():
    p = Poly([parse_size("2*C*H"), parse_size("C*H"), parse_size("K")])
    assert str(p) == "3*C*H + K"
    assert p.to_int({"C": 2, "H": 3, "K": 5}) == 23
    assert Poly([parse_size("C"), parse_size("C") * -1]) == Poly()


@pytest.mark.parametrize(
    "text, message",
    [
        ("10^999999999", "exponent 999999999 is beyond"),
        ("K^999999999", "exponent 999999999 is beyond"),
        ("7^9999999", "exponent 9999999 is beyond"),
        ("K^-65", "exponent -65 is beyond"),
        ("99999999999", "is not a size .* 2\\^31 - 1"),
        ("2147483648*C", "is not a size"),
        ("K*" * 200_000 + "K", "400,001 characters long"),
        ("9" * 5000, "characters long"),
    ],
)
def test_hostile_size_expressions_are_refused_at_once(text, message):
    """Each would have run forever (exact big-integer arithmetic) or overflowed; now a
    SizeError when the file is read, naming the limit."""
    with pytest.raises(SizeError, match=message):
        parse_size(text)


def test_sizes_and_bindings_stay_within_what_tvm_indexes():
    assert parse_size("2147483647*C").coef == 2**31 - 1  # the largest literal is allowed
    with pytest.raises(BindingError, match="sizes go up to 2\\^31 - 1"):
        parse_bindings("C_in=" + "9" * 5000)
    with pytest.raises(BindingError, match="C_in=2147483648: sizes go up to"):
        parse_bindings("C_in=2147483648")
    assert parse_bindings("C_in=2147483647") == {"C_in": 2**31 - 1}
