"""Every chain of Syno's space up to a number of primitives, and an evaluator of a chain's
coordinate expressions: what the lossless-canonicalization test and bench_search share.

The evaluator reads the expressions the way their docstring (core.search.coords) defines them,
independently of the torch code generation, so comparing the two checks that the expressions
describe the chain: y[n, o] = sum over the reduction variables r of x[n, in(o, r)] * prod_w
W_w[w(o, r)], zero where a window coordinate falls outside its axis."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping

import torch

from core.ir.graph import OperatorGraph
from core.search.base import Budget
from core.search.canonical import chain_violation
from core.search.chain import Step
from core.search.coords import Expr, bound
from core.search.syno import SynoRandom, SynoSpace


def space(template: OperatorGraph, depth: int, canonical: bool) -> SynoSpace:
    """Syno's space at most `depth` primitives, no FLOPs cap, shape distance on."""
    return SynoRandom(template, Budget(flops=None, max_primitives=depth), seed=0, use_canonical=canonical).space


def enumerate_chains(s: SynoSpace) -> dict[tuple, list[tuple[Step, ...]]]:
    """Every complete chain (bottom-up steps) the space reaches, by canonical form; with the
    rules on, the chains that pass every rule (as a rollout's end checks them)."""
    forms: dict[tuple, list[tuple[Step, ...]]] = defaultdict(list)
    stack = [s.root]
    while stack:
        p = stack.pop()
        if s.complete(p) and not (s.use_canonical and chain_violation(list(reversed(p.steps)), s.spatial)):
            forms[s.algebra.key(p.coords)].append(p.steps)
        stack += [c for c in (s.child(p, a) for a in s.actions(p)) if c is not None]
    return dict(forms)


def random_weights(s: SynoSpace, steps, sizes: Mapping[str, int], seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g, dtype=torch.float64) for shape in weight_shapes(s, steps, sizes)]


def random_inputs(n: int, sizes: Mapping[str, int]) -> torch.Tensor:
    """n inputs [C_in, H, W], the same for the same n."""
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, sizes["C_in"], sizes["H"], sizes["W"], generator=g, dtype=torch.float64)


def shares(steps) -> int:
    return sum(s.op == "share" for s in steps)


def twin_fit(canonical: SynoSpace, twin, raw: SynoSpace, chains, sizes: Mapping[str, int]) -> float:
    """For a twin with one weight: the largest relative residual of least squares over its
    weight that reproduces each chain's output at random weights, on more outputs than the
    weight has entries (0: each chain's map, a random one of its function, is the twin's)."""
    per_input = math.prod(int(d.size.evaluate(sizes)) for d in canonical.root.frontier)
    x = random_inputs(math.prod(weight_shapes(canonical, twin, sizes)[0]) // per_input + 2, sizes)
    matrix = design(canonical, twin, x, sizes)
    outputs = [evaluate(raw, c, x, random_weights(raw, c, sizes, i), sizes).flatten() for i, c in enumerate(chains)]
    wanted = torch.stack(outputs, 1)
    solution = torch.linalg.lstsq(matrix, wanted, driver="gelsd").solution
    return float(((matrix @ solution - wanted).norm(dim=0) / wanted.norm(dim=0)).max())


def lost_functions(raw: SynoSpace, forms: dict, canonical: SynoSpace, twins: dict, sizes: Mapping[str, int]):
    """What the canonical chains (`twins`, by form) fail to compute of the chains found
    without the rules (`forms`): (forms no canonical chain has, chains their canonical twin
    does not reproduce, chains checked by fitting a one-weight twin, chains checked with
    every weight 1 against a twin with several weights, outputs compared up to a scale)."""
    missing = [form for form in forms if form not in twins]
    wrong, fitted, ones = [], 0, 0
    x = random_inputs(2, sizes)
    for form, chains in forms.items():
        if form in missing:
            continue
        twin = min(twins[form], key=shares)
        if shares(twin) == 1:
            fitted += len(chains)
            if twin_fit(canonical, twin, raw, chains, sizes) > 1e-8:
                wrong += [(twin, c) for c in chains if twin_fit(canonical, twin, raw, [c], sizes) > 1e-8]
            continue
        ones += len(chains)
        want = evaluate(canonical, twin, x, _ones(canonical, twin, sizes), sizes).flatten()
        for c in chains:
            y = evaluate(raw, c, x, _ones(raw, c, sizes), sizes).flatten()
            scale = (y @ want) / (want @ want)
            if not (scale > 0 and torch.allclose(y, scale * want, rtol=1e-9, atol=1e-9)):
                wrong.append((twin, c))
    return missing, wrong, fitted, ones


def _ones(s: SynoSpace, steps, sizes: Mapping[str, int]) -> list[torch.Tensor]:
    return [torch.ones(shape, dtype=torch.float64) for shape in weight_shapes(s, steps, sizes)]


def canonical_rate(template: OperatorGraph, budget: Budget, samples: int, seed: int = 0) -> tuple[int, int, int]:
    """Syno's redundancy measure (86 canonical of 6,452 samples): random chains drawn with
    canonicalization off (shape distance on), how many pass every rule, and how many distinct
    functions (canonical forms) they are. Returns (drawn, canonical, functions)."""
    raw = SynoRandom(template, budget, seed=seed, use_canonical=False)
    judge = SynoRandom(template, budget, seed=seed).space
    drawn, canonical, forms = 0, 0, set()
    while drawn < samples:
        p = raw.space.rollout(raw.space.root, raw.rng)
        if p is None:
            continue
        drawn += 1
        canonical += judge.violation(p) is None
        forms.add(raw.space.algebra.key(p.coords))
    return drawn, canonical, len(forms)


def terms(s: SynoSpace, steps: tuple[Step, ...]):
    """(the input's coordinate expressions, each weight's in the order of its axes and of the
    weights in the generated module (top-down), the reduction variables)."""
    shapes = [s.synth.target]
    for step in reversed(steps):
        shapes.append(step.prim().infer([shapes[-1]], s.synth.kinds))
    state, weights = s.algebra.start(shapes[-1]), []
    for step, before in zip(steps, reversed(shapes[:-1])):
        if step.op == "share":
            lead, rest = state.coords[:1], state.coords[1:]  # every synthesized share has `out`
            weights.append([*lead, *(rest[d] for d in step.get("dims"))])
        state = s.algebra.apply(state, step, before)
    return state.coords, weights[::-1], state.reduced


def evaluate(s: SynoSpace, steps, x: torch.Tensor, weights: list[torch.Tensor], sizes: Mapping[str, int]):
    """The chain's output computed from its coordinate expressions, [N, *output]."""
    y, reads, out = _terms_on_grid(s, steps, x, sizes)
    for w, (index, inside) in zip(weights, reads):
        y = y * (w.flatten()[index] * inside)
    return y.sum(dim=tuple(range(1 + len(out), y.dim())))


def design(s: SynoSpace, steps, x: torch.Tensor, sizes: Mapping[str, int], weights=(), k: int = 0) -> torch.Tensor:
    """The output is linear in each weight: the matrix from weight k's entries to the outputs,
    [N * numel(output), numel(weight k)], the other `weights` (the chain's, in its order) held."""
    y, reads, out = _terms_on_grid(s, steps, x, sizes)
    for j, (w, (index, inside)) in enumerate(zip(weights, reads)):
        if j != k:
            y = y * (w.flatten()[index] * inside)
    index, inside = reads[k]
    y = (y * inside).broadcast_to(y.shape)
    n, o = x.shape[0], math.prod(out)
    index = index.broadcast_to(y.shape[1:]).reshape(1, o, -1).expand(n, o, -1)
    entries = math.prod(weight_shapes(s, steps, sizes)[k])
    matrix = torch.zeros(n, o, entries, dtype=y.dtype)
    return matrix.scatter_add_(2, index, y.reshape(n, o, -1)).reshape(n * o, entries)


def fit(s: SynoSpace, steps, x: torch.Tensor, sizes: Mapping[str, int], wanted: torch.Tensor, rounds: int = 6) -> float:
    """How close the chain can compute `wanted` (its output's shape, flattened) on inputs x:
    the relative residual of least squares over its weights, one weight at a time from random
    ones (exact in one round for one weight)."""
    g = torch.Generator().manual_seed(0)
    weights = [torch.randn(shape, generator=g, dtype=x.dtype) for shape in weight_shapes(s, steps, sizes)]
    for _ in range(rounds if len(weights) > 1 else 1):
        for k, w in enumerate(weights):
            matrix = design(s, steps, x, sizes, weights, k)
            normal = matrix.T @ matrix
            normal += torch.eye(len(normal), dtype=x.dtype) * (1e-9 * normal.trace() / len(normal) + 1e-12)
            weights[k] = torch.linalg.solve(normal, matrix.T @ wanted).reshape(w.shape)
    return float((design(s, steps, x, sizes, weights, 0) @ weights[0].flatten() - wanted).norm() / wanted.norm())


def weight_shapes(s: SynoSpace, steps, sizes: Mapping[str, int]) -> list[tuple[int, ...]]:
    """The shapes of the chain's weights, in the module's order."""
    return [tuple(int(bound(e).evaluate(sizes)) for e in axes) for axes in terms(s, steps)[1]]


def _terms_on_grid(s: SynoSpace, steps, x: torch.Tensor, sizes: Mapping[str, int]):
    """On a grid over the output coordinates and the reduction variables: the input read at
    each point (zero outside a window), and for each weight the flat index of the entry read
    there with whether it is inside; and the output's sizes."""
    inputs, axes, reduced = terms(s, steps)
    out = [int(d.size.evaluate(sizes)) for d in s.root.frontier]
    grid = {f"o{i}": n for i, n in enumerate(out)} | {r[1]: int(r[2].evaluate(sizes)) for r in reduced}
    position = {name: i for i, name in enumerate(grid)}

    def value(e: Expr) -> tuple[torch.Tensor, torch.Tensor]:
        tag = e[0]
        if tag == "v":
            shape = [1] * len(grid)
            shape[position[e[1]]] = grid[e[1]]
            return torch.arange(grid[e[1]]).reshape(shape), torch.ones((), dtype=torch.bool)
        if tag == "+":
            parts = [(int(c.evaluate(sizes)), value(t)) for c, t in e[1]]
            return sum(c * v for c, (v, _) in parts), _all(ok for _, (_, ok) in parts)
        if tag in ("/", "%"):
            v, ok = value(e[1])
            d = int(e[2].evaluate(sizes))
            return (v // d if tag == "/" else v % d), ok
        if tag == "roll":
            v, ok = value(e[1])
            return (v + e[2]) % int(e[3].evaluate(sizes)), ok
        if tag == "win":  # x + k - K//2, zero outside the axis
            (v, ok), (k, ok_k) = value(e[1]), value(e[2])
            at = v + k - int(bound(e[2]).evaluate(sizes)) // 2
            return at, ok & ok_k & (at >= 0) & (at < int(e[3].evaluate(sizes)))
        raise ValueError(f"no evaluation for {tag}")

    def read(exprs, dims):
        """The flat index of the entry the expressions read, and whether it is inside."""
        values = [value(e) for e in exprs]
        inside = _all(ok for _, ok in values)
        flat = torch.zeros((), dtype=torch.long)
        for (v, _), n in zip(values, dims):
            flat = flat * n + torch.where(inside, v, 0)
        return flat, inside

    index, inside = read(inputs, x.shape[1:])
    y = x.flatten(1)[:, index] * inside
    y = y.broadcast_to((x.shape[0], *grid.values()))
    weights = [read(exprs, shape) for exprs, shape in zip(axes, weight_shapes(s, steps, sizes))]
    return y, weights, out


def _all(masks) -> torch.Tensor:
    inside = torch.ones((), dtype=torch.bool)
    for ok in masks:
        inside = inside & ok
    return inside
