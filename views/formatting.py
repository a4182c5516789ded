"""Short, human-readable text for shapes, costs, parameters and durations shown in the window."""

from __future__ import annotations

from core.ir.primitives import Primitive


def human(n: int) -> str:
    """231211008 -> '231.2M'; small numbers stay exact."""
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.1f}{suffix}"
    return str(n)


def numeric_shape(dims: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in dims)


def param_value(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return "—" if value is None else str(value)


def params_line(prim: Primitive) -> str:
    """'dim=1  K=K' — every parameter, in declaration order."""
    return "  ".join(f"{p.name}={param_value(prim.params[p.name])}" for p in prim.spec)
