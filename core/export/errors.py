"""Errors of exporting: each message names the operator, the file or the format at fault."""

from __future__ import annotations

from core.errors import TesseraError


class ExportError(TesseraError):
    """An export cannot be made: the file exists (and overwriting was not allowed), the
    operator or store is missing, or the format does not apply to this operator."""
