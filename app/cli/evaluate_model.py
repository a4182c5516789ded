"""`tessera evaluate OP --model FILE.py:FUNCTION --input C,H,W`: the operator in a user's own
network (or a built-in backbone named as a model), its FLOPs, parameters and tuned end-to-end
latency against the same network unreplaced (core.networks.user_models). The model is built,
and its file run, only in the worker process this starts."""

from __future__ import annotations

from core.data.assignment import Assignment, read_stand_in
from core.jobs.isolate import call_in_subprocess
from core.networks.settings import DeploySettings
from core.networks.user_models import ModelError, ModelRef, parse_input

from .inputs import transfer_sources
from .reports import faster_text, table_lines


def add_model_options(p) -> None:
    p.add_argument(
        "--model",
        metavar="FILE.py:FUNCTION",
        default=None,
        help="time the operator in your own network: the function in FILE.py that builds the nn.Module "
        "(run in a worker process), or a built-in backbone's name; prints FLOPs, parameters and tuned "
        "latency of the network with the operator and without (no training)",
    )
    p.add_argument(
        "--input", default="3,32,32", metavar="C,H,W", help="one example's size for --model (default %(default)s)"
    )


def cmd_evaluate_model(args) -> int:
    ref, shape = ModelRef.parse(args.model), parse_input(args.input)
    document, stand_in = read_stand_in(args.file)
    if isinstance(stand_in, Assignment):
        raise ModelError("--model takes one operator; an assignment names the layers of a built-in backbone")
    deploy = DeploySettings(
        trials=args.trials,
        transfer=not args.no_transfer,
        sources=tuple(transfer_sources(args.sources, not args.no_transfer, "drop --no-transfer")),
        seed=args.seed,
        replace=tuple(args.replace.split(",")),
    )
    print(f"timing {stand_in.name or args.file} in {ref.label} at {'x'.join(map(str, shape))} (in a worker process)")
    result = call_in_subprocess(
        "core.networks.user_models:evaluate_model_call",
        {
            "document": document,
            "model": args.model,
            "input_shape": list(shape),
            "deploy": deploy.to_payload(),
            "tuning_root": args.tuning_dir,
        },
        on_progress=lambda fraction, message: print(f"  {100 * fraction:3.0f}% {message}", flush=True),
    )
    for line in model_table(result):
        print(line)
    return 0


def model_table(r: dict) -> list[str]:
    """The replacement report, then one table: FLOPs, parameters, tuned TVM and eager PyTorch latency."""
    tuned = "tuned" if not r["untuned_kernels"] else f"NOT all tuned: {len(r['untuned_kernels'])} kernels untuned"
    speedup = faster_text(r["speedup"], r["speedup_low"], r["speedup_high"])  # tuned_end_to_end always has one
    rows = [
        ("", f"with {r['operator']}", "original", "ratio"),
        (
            "FLOPs (torch's count, batch 1)",
            f"{r['candidate_flops']:,}",
            f"{r['original_flops']:,}",
            f"{r['candidate_flops'] / r['original_flops']:.2f}x" if r["original_flops"] else "",
        ),
        (
            "parameters",
            f"{r['candidate_params']:,}",
            f"{r['original_params']:,}",
            f"{r['candidate_params'] / r['original_params']:.2f}x" if r["original_params"] else "",
        ),
        (f"TVM, {tuned}", f"{r['latency_ms']:.3f} ms", f"{r['baseline_latency_ms']:.3f} ms", speedup),
        (
            "PyTorch eager",
            f"{r['torch_latency_ms']:.3f} ms",
            f"{r['torch_baseline_ms']:.3f} ms",
            faster_text(r["torch_baseline_ms"] / r["torch_latency_ms"]),
        ),
    ]
    where = f"{r['model']} at {'x'.join(map(str, r['input']))}, {r['threads']} thread(s), load {r['load']:.1f}"
    return [*r["report"], "", where, *table_lines(rows)]
