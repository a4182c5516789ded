"""Code generators: an operator graph at concrete sizes -> torch module (and its source).

Importing this package does not import torch; only `build_module` does, when called."""

from .errors import CodegenError
from .to_torch import build_module, module_source
from .torch_plan import weight_names

__all__ = ["CodegenError", "build_module", "module_source", "weight_names"]
