"""Errors of an evaluation job, each naming the setting or operator at fault."""

from __future__ import annotations

from core.errors import TesseraError


class EvaluationError(TesseraError):
    """A job's settings are invalid, or the operator fits none of the backbone's convolutions."""
