"""Errors of compiling, checking and tuning an operator; each message names the operator."""

from __future__ import annotations

from core.errors import TesseraError


class CompileError(TesseraError):
    """TVM could not build or run the operator, or the request names an unknown device."""


class NumericalMismatch(CompileError):
    """TVM's output differs from the torch module's on the same input and weights."""

    def __init__(self, message: str, max_abs_error: float):
        super().__init__(message)
        self.max_abs_error = max_abs_error


class TuningError(CompileError):
    """MetaSchedule failed, or its tuning database cannot be used."""
