"""Errors of the results store, each with a message meant for a person."""

from __future__ import annotations

from core.ir.errors import TesseraError


class StoreError(TesseraError):
    """The store file cannot be opened, is too new for this program, or stayed locked."""


class InvalidResult(TesseraError):
    """A result dict (from a job handler or a caller) lacks a field or has one of the wrong type."""
