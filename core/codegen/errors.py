"""Errors of the code generators."""

from core.errors import TesseraError


class CodegenError(TesseraError):
    """The graph cannot be turned into code: a shape error, an unsolved dynamic variable,
    an unusable class name; the message names the node or the variable at fault."""
