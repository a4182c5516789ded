"""The base of every error a user may see. Each carries a message meant for a person, naming
the node, dimension, file or element at fault, so callers print it as-is."""


class TesseraError(Exception):
    """Base of every error a user may see; the CLI prints its message without a traceback."""
