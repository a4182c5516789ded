"""The primitive base class and its parameter schema.

A primitive knows its parameters, its shape rule and its cost. Lowering to
torch and TVM lives in core/codegen, keyed by primitive class, so that the IR
stays free of heavy imports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.errors import shorten, shown

from ..errors import ParamError, ShapeError, SizeError
from ..symbolic import MAX_SIZE, Size, VarKind, parse_size
from ..tensor import Dim, TensorType


@dataclass(frozen=True)
class Param:
    """One parameter: `kind` is dim (an axis index), dims (list of axes), size
    (symbolic expression such as 'K' or 'C_out/G'), int, or choice."""

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple[str, ...] = field(default=())
    optional: bool = False


class Primitive:
    op: ClassVar[str]
    title: ClassVar[str]
    families: ClassVar[tuple[str, ...]]  # "canvas" (tensor-level), "syno" (coordinate-level), "tessera" (ours)
    category: ClassVar[str]
    doc: ClassVar[str]
    ports: ClassVar[tuple[str, ...]] = ("x",)
    spec: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, params: Mapping[str, Any] | None = None):
        params = dict(params or {})
        known = {p.name for p in self.spec}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ParamError(
                f"{self.op}: unknown parameter(s) {shorten(', '.join(unknown))} (expected {', '.join(sorted(known)) or 'none'})"
            )
        self.params: dict[str, Any] = {}
        for p in self.spec:
            value = params.get(p.name, p.default)
            self.params[p.name] = _check_param(self.op, p, value)

    # parameters ---------------------------------------------------------
    def size(self, name: str) -> Size | None:
        """A size parameter, None where an optional one is not given (a share without out)."""
        text = self.params[name]
        return None if text in (None, "") else parse_size(str(text))

    def required_size(self, name: str) -> Size:
        """A size parameter the primitive cannot do without (a group count, a window)."""
        size = self.size(name)
        if size is None:
            raise ParamError(f"{self.op}: {name} needs a size expression")
        return size

    def with_params(self, **changes) -> Primitive:
        return type(self)({**self.params, **changes})

    @property
    def arity(self) -> int:
        return len(self.ports)

    # rules --------------------------------------------------------------
    def infer(self, inputs: list[TensorType], kinds: Mapping[str, VarKind]) -> TensorType:
        raise NotImplementedError

    def weight_shape(self, inputs: list[TensorType], out: TensorType) -> tuple[Size, ...] | None:
        """Shape of this primitive's learnable weight, or None when it has none."""
        return None

    def integral(self, inputs: list[TensorType], out: TensorType) -> list[tuple[str, Size]]:
        """Sizes that must be whole numbers once bound, beyond the output shape (named for errors):
        every size parameter (a group count, a factor, a window) and the weight's dimensions."""
        params = [(p.name, self.size(p.name)) for p in self.spec if p.kind == "size"]
        weight = self.weight_shape(inputs, out) or ()
        return [(name, s) for name, s in params if s is not None] + [
            (f"weight dim {i}", s) for i, s in enumerate(weight)
        ]

    def macs(self, inputs: list[TensorType], out: TensorType) -> Size:
        return Size(0)

    def flops(self, inputs: list[TensorType], out: TensorType) -> Size:
        """Floating-point operations; element-wise work counts one per output element."""
        return out.numel()

    def axis(self, t: TensorType, name: str = "dim") -> int:
        """Normalise an axis parameter against a tensor, with a clear error."""
        d = self.params[name]
        if not -len(t) <= d < len(t):
            raise ShapeError(f"{name}={d} is out of range for a {len(t)}-d input {t}")
        return d % len(t)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.params == other.params

    def __hash__(self) -> int:
        return hash((self.op, repr(sorted(self.params.items()))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params})"


def _check_param(op: str, p: Param, value: Any) -> Any:
    where = f"{op}.{p.name}"
    if value is None and p.optional:
        return None
    if p.kind == "dim":
        if not _whole(value):
            raise ParamError(f"{where} must be an integer axis index, got {shown(value)}")
    elif p.kind == "dims":
        if not isinstance(value, list) or not value or not all(_whole(v) for v in value):
            raise ParamError(f"{where} must be a non-empty list of axis indices, got {shown(value)}")
        if len(set(value)) != len(value):
            raise ParamError(f"{where} repeats an axis: {shown(value)}")
    elif p.kind == "int":
        if not _whole(value):
            raise ParamError(f"{where} must be an integer from -(2^31 - 1) to 2^31 - 1, got {shown(value)}")
    elif p.kind == "size":
        if _whole(value) and value > 0:
            value = str(value)
        if not isinstance(value, str):
            raise ParamError(f"{where} must be a size expression such as 'K' or 'C_out/G', got {shown(value)}")
        try:
            parse_size(value)
        except SizeError as e:
            raise ParamError(f"{where}: {e}") from None
    elif p.kind == "choice" and value not in p.choices:
        raise ParamError(f"{where} must be one of {', '.join(p.choices)}, got {shown(value)}")
    return value


def _whole(value: Any) -> bool:
    """A whole number within the one bound every integer of a file is held to (+-MAX_SIZE)."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SIZE


def require_divisible(num: Size, den: Size, kinds: Mapping[str, VarKind], what: str) -> Size:
    """num / den, refusing primary or dynamic variables in the denominator."""
    ratio = num / den
    blockers = ratio.divisor_blockers(kinds)
    if blockers:
        raise ShapeError(f"{what}: {num} is not divisible by {den} ({', '.join(blockers)} would be in a denominator)")
    return ratio


def insert_before_spatial(t: TensorType, dim: Dim) -> TensorType:
    """Insert a channel dimension just before the first spatial one (Canvas keeps channels first)."""
    spatial = t.spatial_dims
    at = spatial[0] if spatial else len(t)
    dims = list(t)
    dims.insert(at, dim)
    return TensorType(dims)
