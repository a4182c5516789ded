"""Errors raised by the IR: sizes, bindings, shapes, parameters, edges and files."""

from core.errors import TesseraError


class SizeError(TesseraError):
    """A symbolic size expression is malformed or cannot be evaluated."""


class BindingError(TesseraError):
    """Concrete values for the variables are missing, malformed or give non-integers."""


class ShapeError(TesseraError):
    """A primitive's shape rule rejects its inputs; `dim` is the offending dimension if known."""

    def __init__(self, message: str, dim: int | None = None):
        super().__init__(message)
        self.dim = dim


class ParamError(TesseraError):
    """A primitive parameter has the wrong type or value."""


class ConnectionRefused(TesseraError):
    """An edge that can never be legal (cycle, occupied port, wrong direction)."""


class FormatError(TesseraError):
    """An operator file is not a valid Tessera document."""
