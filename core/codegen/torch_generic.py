"""Operator graph -> a shape-generic torch module, for people to drop into their networks.

The module takes its sizes as nn.Conv2d does, `Op(in_channels, out_channels, kernel_size=3,
stride=1, *, G=4)` (coefficients keyword-only, defaulting to the operator's bindings), and
reads the height and width from its input, so one class serves every layer and every
resolution. The forward lines are core.codegen.torch_layers' own, generated once with sizes
that print as expressions (core.codegen.sym_sizes). The module refuses, at construction or
on an input, sizes at which the operator does not exist (a size that does not divide,
naming the nearest values that do) and sizes at which the generated code would differ
(a guard, e.g. an odd window). A height or width a weight depends on stays fixed: the
module checks its input has it.

A stride subsamples the input (every stride-th row and column) before the operator, as
core.data.swap_convs does for a strided convolution it stands in for."""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from math import lcm

from ..analysis.shapes import infer_shapes, whole_sizes
from ..errors import TesseraError, shorten
from ..ir.graph import OperatorGraph
from ..ir.symbolic import Size, as_size
from .errors import CodegenError
from .sym_sizes import Expr, Guard, Trace, negation, sample_values, tracing
from .to_torch import compiled_class, module_class, python_class_name
from .torch_layers import forward_lines
from .torch_ops import ints
from .torch_plan import BATCH_NAME, INPUT_NAME, make_plan

_INDENT = " " * 4
_FIXED_ARGUMENTS = {"in_channels", "out_channels", "kernel_size", "stride", "self", INPUT_NAME, BATCH_NAME}

CHECK_HELPER = '''def require_whole(where, text, factor, powers):
    """Refuse sizes at which `text`, factor[0] / factor[1] times the product of value ** power
    over `powers` (name: (value, power)), is not a whole number: the error names, for each
    variable, the nearest values that make it whole with the others as given."""

    def ratio(name=None, value=None):
        num, den = factor
        for other, (v, power) in powers.items():
            v = value if other == name else v
            num, den = (num * v**power, den) if power > 0 else (num, den * v**-power)
        return num, den

    num, den = ratio()
    if num % den == 0:
        return
    hints = []
    for name, (v, _) in powers.items():
        fits = [c for c in (*range(v - 1, 0, -1), *range(v + 1, 4 * v + 64)) if ratio(name, c)[0] % ratio(name, c)[1] == 0]
        below, above = max((c for c in fits if c < v), default=None), min((c for c in fits if c > v), default=None)
        near = " or ".join(f"{name}={c}" for c in (below, above) if c is not None)
        hints += [near] if near else []
    raise ValueError(
        f"{where}: {text} = {num}/{den} is not a whole number; it is with " + ", or with ".join(hints) + " (the rest as given)"
    )'''


@dataclass(frozen=True)
class Roles:
    """What each variable of the operator is in the module: constructor arguments (in order,
    with the Python name they are given and their default), the input's height and width
    (read at run time, unless a weight depends on them: then fixed), and the output channels
    when no argument sets them."""

    graph: OperatorGraph
    c_in: str
    c_out: str | None  # the output's channel variable, when it is one of its own
    spatial: tuple[str, str]
    fixed: tuple[str, ...]  # spatial sizes a weight depends on
    kernel: str | None
    coefficients: tuple[str, ...]

    def python(self, var: str) -> str:
        """How the module's code reads a variable."""
        if var in self.spatial and var not in self.fixed:
            return var
        if var == self.c_in:
            return "self.in_channels"
        if var == self.c_out:
            return "self.out_channels"
        if var == self.kernel:
            return "self.kernel_size"
        return f"self.{var}"

    def argument(self, var: str) -> str:
        return {self.c_in: "in_channels", self.c_out: "out_channels", self.kernel: "kernel_size"}.get(var, var)


def generic_source(graph: OperatorGraph, class_name: str | None = None, layers: bool = True) -> str:
    """Standalone source of the operator as a shape-generic nn.Module (see the module docstring).
    Each condition the generated code was found to depend on is tried at small sizes where it
    fails: when the module still computes what the operator computes there, it is no condition."""
    name = python_class_name(graph, class_name)
    code = _generate(graph, layers)
    if not code.guards:
        return code.render(name, [])
    permissive = compiled_class(code.render(name, []), name)
    verdicts: dict[tuple[tuple[str, int], ...], bool] = {}  # several guards often fail at the same sizes
    kept = [g for g in code.guards if not _harmless(graph, code, permissive, g, verdicts)]
    return code.render(name, kept)


@dataclass(frozen=True)
class _Code:
    """One generation pass: the lines of the module's parts, and what they depend on."""

    roles: Roles
    values: dict[str, int]  # the sizes it was generated at
    declared: list[str]
    init: list[str]
    forward: list[str]
    helpers: list[str]
    whole: list[Size]
    guards: list[Guard]

    def render(self, class_name: str, guards: list[Guard]) -> str:
        roles, graph = self.roles, self.roles.graph
        lines = [
            f"# Generated by Tessera from operator {shorten(graph.name)!a}: {graph.input_type()} -> "
            f"[{', '.join(map(str, graph.output_template()))}], at any sizes it takes.",
            "import torch",
            "from torch import nn",
            *(part for helper in (*self.helpers, CHECK_HELPER) for part in ("", "", helper)),
            "",
            "",
            f"class {class_name}(nn.Module):",
            *_constructor(roles, self.values, self.whole, guards),
            *self.declared,
            *([f"{_INDENT * 2}self.reset_parameters()"] if self.declared else []),
            "",
            f"{_INDENT}def extra_repr(self):",
            f"{_INDENT * 2}return {_repr_text(roles)}  # the sizes, as error messages name them",
        ]
        if self.init:
            lines += ["", f"{_INDENT}def reset_parameters(self):", *self.init]
        h, w = roles.spatial
        lines += [
            *_input_check(roles, self.whole, guards),
            "",
            f"{_INDENT}def forward(self, {INPUT_NAME}):",
            f"{_INDENT * 2}if self.stride > 1:  # every stride-th row and column, as a strided convolution computes",
            f"{_INDENT * 3}{INPUT_NAME} = {INPUT_NAME}[:, :, :: self.stride, :: self.stride]  # [N, C_in, H / stride, W / stride]",
            f"{_INDENT * 2}{h}, {w} = self.input_size({INPUT_NAME})  # [N, C_in, {h}, {w}], checked",
            f"{_INDENT * 2}{BATCH_NAME} = {INPUT_NAME}.shape[0]  # the batch",
            *self.forward,
        ]
        return "\n".join(lines) + "\n"


def _generate(graph: OperatorGraph, layers: bool) -> _Code:
    roles = _roles(graph)
    values = _generation_point(graph, roles)
    primary = {v for v in (roles.c_in, roles.c_out, *roles.spatial) if v}
    trace = Trace(sample_values(values, primary), names=roles.python)
    with tracing(trace):
        plan = make_plan(graph, values, symbolic=True)
        body = forward_lines(plan, layers)
        weights = [s.weight for s in plan.steps if s.weight is not None]
        declared = [
            f"{_INDENT * 2}self.{w.name} = nn.Parameter(torch.empty({ints(w.shape)}))"
            f"  # {s.prim.op} {s.node!a}: weight [{', '.join(map(str, w.symbolic))}]"
            for s in plan.steps
            if (w := s.weight) is not None
        ]
        init = [
            line
            for w in weights
            for line in (
                f"{_INDENT * 2}bound = ({w.fan_in}) ** -0.5  # kaiming-uniform as torch's convolutions: 1 / sqrt(fan_in)",
                f"{_INDENT * 2}nn.init.uniform_(self.{w.name}, -bound, bound)  # {w.name}: [{', '.join(map(str, w.symbolic))}]",
            )
        ]
        forward = [f"{_INDENT * 2}{line.result} = {line.expression}  # {line.comment}" for line in body]
        forward.append(f"{_INDENT * 2}return {plan.result}  # [N, {', '.join(map(str, graph.output_template()))}]")
    helpers = list(dict.fromkeys(h for line in body for h in line.helpers))
    return _Code(roles, values, declared, init, forward, helpers, _whole_sizes(graph, trace), trace.guards)


def _harmless(
    graph: OperatorGraph, code: _Code, permissive: type, guard: Guard, verdicts: dict[tuple[tuple[str, int], ...], bool]
) -> bool:
    """True when, at small sizes where `guard` fails, the module made without the condition
    (class `permissive`) computes what the operator at those sizes computes; `verdicts`: those
    found so far, by sizes."""
    point = _flip_point(graph, code, guard)
    if point is None:
        return False
    key = tuple(sorted(point.items()))
    if key not in verdicts:
        verdicts[key] = _computes_the_operator(graph, code.roles, permissive, point)
    return verdicts[key]


def _computes_the_operator(graph: OperatorGraph, roles: Roles, permissive: type, point: dict[str, int]) -> bool:
    """Whether `permissive` at sizes `point` computes what the operator there computes (weights copied across)."""
    import torch

    try:
        reference = module_class(graph, point)().double()
        arguments = {roles.argument(v): point[v] for v in (roles.c_in, roles.c_out, roles.kernel) if v}
        module = permissive(**arguments, **{v: point[v] for v in roles.coefficients})
        module = module.double()
        module.load_state_dict(reference.state_dict())
        x = torch.randn(2, point[roles.c_in], point[roles.spatial[0]], point[roles.spatial[1]], dtype=torch.float64)
        with torch.no_grad():
            return bool(torch.allclose(module(x), reference(x), atol=1e-9))
    except (TesseraError, RuntimeError, ValueError):
        return False


def _flip_point(graph: OperatorGraph, code: _Code, guard: Guard) -> dict[str, int] | None:
    """Small sizes at which the guard fails and the operator exists: coefficients from 1 to 8
    (one changed at a time from the operator's own), primary sizes the least that make every
    size whole, one of them scaled up or not, kept distinct."""
    roles, own = code.roles, code.values
    primaries = [v for v in (roles.c_in, roles.c_out, *roles.spatial) if v and v not in roles.fixed]
    coefficients = [v for v in own if v not in primaries and v not in roles.fixed]
    points = [own] + [{**own, v: value} for v in coefficients for value in range(1, 9) if value != own[v]]
    for point in points:
        for scaled in (None, *primaries):
            candidate = _smallest_primaries(code, point, primaries, scaled)
            if candidate is None or guard.holds(candidate):
                continue
            try:
                make_plan(graph, candidate)
            except TesseraError:
                continue
            return candidate
    return None


def _smallest_primaries(code: _Code, point: dict[str, int], primaries: list[str], scaled: str | None) -> dict[str, int]:
    """`point` with each primary size the least multiple of what the whole sizes need it to be
    divisible by (channels at least 2, height and width at least 9), `scaled` 8 times that."""
    need = dict.fromkeys(primaries, 1)
    for size in code.whole:
        carriers = [v for v in primaries if size.exponent(v) > 0]
        if carriers and not size.denominator().variables - set(point):
            need[carriers[0]] = lcm(need[carriers[0]], int(size.denominator().evaluate(point)))
    result, taken = dict(point), set()
    for v in primaries:
        least = 9 if v in code.roles.spatial else 2
        value = need[v] * -(-least // need[v]) * (8 if v == scaled else 1)
        while value in taken:
            value += need[v]
        result[v] = value
        taken.add(value)
    return result


def _roles(graph: OperatorGraph) -> Roles:
    inputs, outputs = list(graph.input_shape), list(graph.output_shape)
    if len(inputs) != 3 or len(outputs) != 3 or graph.spatial != 2:
        raise CodegenError(
            f"{shorten(graph.name)}: shape-generic code needs an operator mapping [C, H, W] to [C', H, W]; "
            f"this one maps {inputs} to {outputs}"
        )
    c_in, h, w = (str(e) for e in inputs)
    if not all(v.isidentifier() for v in (c_in, h, w)) or len({c_in, h, w}) < 3:
        raise CodegenError(f"{shorten(graph.name)}: its input {inputs} is not three distinct variables [C, H, W]")
    if [str(e) for e in outputs[1:]] != [h, w]:
        raise CodegenError(f"{shorten(graph.name)}: its output {outputs} does not keep the input's {h} x {w}")
    out = str(outputs[0])
    c_out = out if out.isidentifier() and out not in (c_in, h, w) else None
    weighted = make_plan(graph).steps
    fixed = tuple(
        v for v in (h, w) if any(v in size.variables for s in weighted if s.weight for size in s.weight.symbolic)
    )
    variables = graph.mentioned_variables()
    kernel = "K" if "K" in variables else None
    coefficients = tuple(sorted(variables - {c_in, c_out, h, w, kernel}))
    clash = [v for v in (*coefficients, h, w) if v in _FIXED_ARGUMENTS or keyword.iskeyword(v) or v.startswith("_")]
    if clash:
        raise CodegenError(f"{shorten(graph.name)}: variable {clash[0]} clashes with a name the module's code uses")
    return Roles(graph, c_in, c_out, (h, w), fixed, kernel, coefficients)


def _generation_point(graph: OperatorGraph, roles: Roles) -> dict[str, int]:
    """The operator's bindings with its primary sizes made distinct (64 and 64 -> 64 and 192),
    so that the code never depends on two of them happening to be equal."""
    values = dict(graph.bindings)
    taken = {v for k, v in values.items() if k not in (roles.c_in, roles.c_out, *roles.spatial)}
    for var in (roles.c_in, roles.c_out, *roles.spatial):
        if var is None or var in roles.fixed:
            continue
        base = values[var]
        values[var] = next(base * f for f in (1, 3, 5, 7, 11, 13, 17, 19, 23) if base * f not in taken)
        taken.add(values[var])
    return values


def _repr_text(roles: Roles) -> str:
    shown = [v for v in (roles.c_in, roles.c_out, roles.kernel, *roles.coefficients, *roles.fixed) if v]
    return 'f"' + ", ".join(f"{v}={{{roles.python(v)}}}" for v in shown) + ', stride={self.stride}"'


def _constructor(roles: Roles, values: dict[str, int], whole: list[Size], guards: list[Guard]) -> list[str]:
    graph = roles.graph
    args = ["self", "in_channels"]
    args.append("out_channels" if roles.c_out else "out_channels=None")
    if roles.kernel:
        args.append(f"kernel_size={graph.bindings[roles.kernel]}")
    args.append("stride=1")
    if roles.coefficients:
        args += ["*", *(f"{v}={graph.bindings[v]}" for v in roles.coefficients)]
    lines = [
        f"{_INDENT}def __init__({', '.join(args)}):",
        f"{_INDENT * 2}super().__init__()",
        f"{_INDENT * 2}self.in_channels = in_channels  # {roles.c_in}",
    ]
    if roles.c_out:
        lines.append(f"{_INDENT * 2}self.out_channels = out_channels  # {roles.c_out}")
    if roles.kernel:
        lines.append(f"{_INDENT * 2}self.kernel_size = kernel_size  # {roles.kernel}, the window")
    lines.append(f"{_INDENT * 2}self.stride = stride  # s > 1: the operator reads every s-th row and column")
    lines += [f"{_INDENT * 2}self.{v} = {v}  # a coefficient of the operator" for v in roles.coefficients]
    lines += [f"{_INDENT * 2}self.{v} = {values[v]}  # fixed: a weight depends on it" for v in roles.fixed]
    if not roles.c_out:
        out = Expr(as_size(graph.output_shape[0])).python(roles.python)
        lines += [
            f"{_INDENT * 2}if out_channels not in (None, {out}):  # the operator gives {graph.output_shape[0]}",
            f'{_INDENT * 3}raise ValueError(f"{{self!r}}: the operator gives {{{out}}} output channels, '
            f'not {{out_channels}}")',
            f"{_INDENT * 2}self.out_channels = {out}",
        ]
    return lines + _checks(roles, whole, guards, spatial=False)


def _input_check(roles: Roles, whole: list[Size], guards: list[Guard]) -> list[str]:
    h, w = roles.spatial
    lines = [
        "",
        f"{_INDENT}def input_size(self, x):",
        f'{_INDENT * 2}"""x\'s height and width, once x is checked to be [N, in_channels, H, W] at sizes the operator takes."""',
        f"{_INDENT * 2}if x.dim() != 4 or x.shape[1] != self.in_channels:",
        f'{_INDENT * 3}raise ValueError(f"{{self!r}} takes [N, {{self.in_channels}}, H, W], not {{list(x.shape)}}")',
        f"{_INDENT * 2}{h}, {w} = x.shape[2], x.shape[3]  # the height and width",
    ]
    for v in roles.fixed:
        lines += [
            f"{_INDENT * 2}if {v} != self.{v}:  # a weight depends on it",
            f'{_INDENT * 3}raise ValueError(f"{{self!r}}: {v} is fixed to {{self.{v}}}, the input has {{{v}}}")',
        ]
    return [*lines, *_checks(roles, whole, guards, spatial=True), f"{_INDENT * 2}return {h}, {w}"]


def _checks(roles: Roles, whole: list[Size], guards: list[Guard], spatial: bool) -> list[str]:
    """The checks at construction (spatial False) or on the input: sizes that must be whole,
    then the conditions the code was generated under."""
    where = 'f"{self!r}"' if not spatial else 'f"{self!r} on input {list(x.shape)}"'
    dynamic = {v for v in roles.spatial if v not in roles.fixed}
    lines = []
    for size in whole:
        if bool(size.variables & dynamic) != spatial:
            continue
        powers = ", ".join(f'"{v}": ({roles.python(v)}, {e})' for v, e in size.powers)
        factor = f"({size.coef.numerator}, {size.coef.denominator})"
        lines.append(f'{_INDENT * 2}require_whole({where}, "{size}", {factor}, {{{powers}}})')
    for guard in guards:
        if bool(guard.variables & dynamic) != spatial:
            continue
        lines += [
            f"{_INDENT * 2}if {negation(guard).python(roles.python)}:  # the code below is for sizes where this is false",
            f"{_INDENT * 3}raise ValueError({where[:-1]}: this operator's code needs {_ir_text(guard)}\")",
        ]
    return lines


def _ir_text(guard: Guard) -> str:
    return guard.python(str).replace("{", "{{").replace("}", "}}")


def _whole_sizes(graph: OperatorGraph, trace: Trace) -> list[Size]:
    """Every size of the operator with a denominator (group sizes, strided axes, weights),
    and the exact divisions the code makes, once each."""
    report = infer_shapes(graph)
    found: list[Size] = []
    for node in report.shapes:
        for _, size in whole_sizes(graph, report, node):
            if size.denominator() != Size(1) and size not in found:
                found.append(size)
    return [*found, *(s for s in trace.whole if s not in found)]
