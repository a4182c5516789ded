"""Errors of the data layer, each naming the file, folder, backbone or layer at fault."""

from __future__ import annotations

from core.errors import TesseraError


class DatasetError(TesseraError):
    """A dataset path is missing, or a file in it is truncated, malformed or inconsistent."""


class BackboneError(TesseraError):
    """An unknown backbone name, or a width/resolution it cannot be built with."""


class LayerMismatch(TesseraError):
    """Why the operator cannot stand in for one layer; replace_convs keeps it in the report."""
