"""A discovery run's summary (core.search.summary.RunSummary) in words: the one renderer that
`tessera discover` prints and the window's Search page shows, section by section.

The headline is the best survivor's speedup over the narrowed original at equal accuracy,
where both are within the margin of the original by the test verdict; where that does not
hold, it says so plainly."""

from __future__ import annotations

from dataclasses import dataclass

from ..jobs.queue import duration_text
from ..train.paired import margin_words, mean_std
from .references import NARROWED
from .stages import Phase
from .summary import ORIGINAL, SURVIVOR, Best, Network, RunSummary

#: the counts in a progress line, in the loop's order
PROGRESS = ("proposed", "screened out", "trained", "stopped early", "within margin", "tuned", "in flight")


@dataclass(frozen=True)
class Report:
    """A summary in words: the original network, how the verdicts fell, the best survivor,
    one line per network it is held against, and the headline ("" where there is none)."""

    original: str
    verdicts: str
    best: str
    networks: tuple[str, ...]
    headline: str

    def lines(self) -> list[str]:
        """The whole report, a paragraph a line (what the command line prints)."""
        beside = [f"  {line}" for line in self.networks]
        head = ["Beside its references:", *beside] if beside else []
        return [line for line in (self.original, self.verdicts, self.best, *head, self.headline) if line]


def report(summary: RunSummary) -> Report:
    best = summary.best
    return Report(
        original_text(summary),
        verdicts_text(summary),
        best_text(summary),
        () if best is None else tuple(network_line(n, best) for n in (best.survivor, *best.references)),
        "" if best is None else _capital(headline(best, summary.margin)) + ".",
    )


def progress_text(summary: RunSummary) -> str:
    """'proposing: 3 proposed, 1 screened out, ...': the run's phase and counts."""
    counts = ", ".join(f"{summary.counts[p]} {p}" for p in PROGRESS)
    alone = f"; {summary.to_time_alone} to time alone" if summary.phase == Phase.TIMING_ALONE else ""
    return f"{summary.phase}: {counts}{alone}"


def ended_text(summary: RunSummary) -> str:
    """'Stopped after 53 s: 3 proposed, ...' (the counts that are not 0), with what the
    strategy's exhaustion means."""
    how = "Stopped" if summary.phase == Phase.STOPPED else "Finished"
    counts = ", ".join(f"{n} {stage}" for stage, n in summary.counts.items() if n or stage == "proposed")
    text = f"{how} after {duration_text(summary.seconds)}: {counts}."
    if summary.exhausted:
        text += " The strategy found nothing new several asks in a row: the run stopped proposing early."
    return text


def time_text(summary: RunSummary) -> str:
    """'Elapsed 1:05 · about 58:55 left' while it runs; 'Took 1:05' once it ended."""
    elapsed = duration_text(summary.seconds)
    if summary.phase in (Phase.STOPPED, Phase.FINISHED):
        return f"Took {elapsed}"
    if summary.phase == Phase.ORIGINAL:
        return f"Elapsed {elapsed} · training the original first: the time limit starts once its figures are known"
    if summary.phase in (Phase.FINISHING, Phase.TIMING_ALONE):
        return f"Elapsed {elapsed} · time is up: {summary.phase} ({summary.counts['in flight']} in flight)"
    if summary.budget_seconds is not None:
        left = max(summary.budget_seconds - summary.spent_seconds, 0.0)
        return f"Elapsed {elapsed} · at most {duration_text(left)} left"
    return f"Elapsed {elapsed}"


def original_text(summary: RunSummary) -> str:
    if summary.baseline_accuracy is None:
        if summary.phase == Phase.ORIGINAL:
            return (
                "The original network is being trained once for this run (the accuracy every candidate must keep); "
                "the time limit starts once its figures are known."
            )
        return "The original network has not been trained yet (starting again with the same settings resumes it)."
    tested, rule = summary.baseline_test, summary.seed_rule
    up_front = max(rule.first if rule else len(summary.test_seeds), len(tested))  # later seeds: with candidates
    seeds = ", ".join(map(str, summary.test_seeds[:up_front]))
    test = f"; test accuracy over seeds {seeds}: {mean_std(tested)}" if tested else ""
    return f"The original network: {summary.baseline_accuracy:.1%} proxy (validation) accuracy{test}."


def verdicts_text(summary: RunSummary) -> str:
    """How many candidates were judged and how the test verdicts fell, undecided apart; with a
    seed rule, the seeds it starts from and its cap."""
    c = summary.counts
    text = f"Judged {summary.judged} candidate(s): {c['within margin']} not shown worse on validation"
    if not summary.test_seeds:
        return f"{text} (no test seeds: those are the survivors)."
    limit = margin_words(summary.margin)
    rule = summary.seed_rule
    if rule is None:
        seeds, undecided = f"{len(summary.test_seeds)} seeds", "more seeds would tell"
    else:
        seeds = f"{rule.first} to {rule.cap} seeds ({rule.step} more at a time until the verdict decides)"
        undecided = f"still so at the cap of {rule.cap} seeds"
    return (
        f"{text}; {c['tested']} tested over {seeds}: {c['within on test']} within {limit} (the survivors), "
        f"{c['worse on test']} worse, {c['undecided']} undecided (the interval reaches across the margin: "
        f"{undecided})."
    )


def best_text(summary: RunSummary) -> str:
    """The best survivor, ranked by speedups that are not in doubt; then those that are, unranked."""
    best = summary.best
    doubt = in_doubt_text(summary)
    if best is None:
        if not summary.tune:
            return f"{_survivors(summary)} survivor(s); end-to-end timing is off."
        reliable = " whose timing is not in doubt" if summary.in_doubt else ""
        return f"No survivor has a tuned end-to-end speedup{reliable} yet.{doubt}"
    s = best.survivor
    alone = "timed alone" if s.timed_alone else "timed while other jobs ran; timed again alone when the run ends"
    test = "" if s.test is None else f" On the test split: {s.test.decision.words()}."
    torch = "" if s.torch_ms is None else f"; {s.torch_ms:.2f} ms in PyTorch eager"
    return (
        f"Best of {best.selected_from} judged: {s.name} (operator {s.operator_id}), {s.speedup:.2f}x faster end to "
        f"end than the tuned original ({s.latency_ms:.2f} ms tuned{torch}; {alone}), selected at {best.accuracy:.1%} "
        f"validation accuracy.{test}{doubt}"
    )


def in_doubt_text(summary: RunSummary) -> str:
    """' Not ranked, timing in doubt: mcts-2 (operator 2, 9.00x: why); time them again on a
    quiet machine.' ("" when no survivor's timing is in doubt)."""
    if not summary.in_doubt:
        return ""
    listed = "; ".join(f"{n.name} (operator {n.operator_id}, {n.speedup:.2f}x: {n.note})" for n in summary.in_doubt)
    return f" Not ranked, timing in doubt: {listed}; time them again on a quiet machine."


def _survivors(summary: RunSummary) -> int:
    return summary.counts["within on test"] if summary.test_seeds else summary.counts["within margin"]


def network_line(n: Network, best: Best) -> str:
    """One network beside the best: test accuracy, the paired difference with its interval and
    verdict (after how many seeds, why it stopped), FLOPs, tuned latency, PyTorch's eager latency, speedup over the original and the narrowed."""
    if n.kind == ORIGINAL:
        accuracy = f"test {mean_std(n.accuracies)}" if n.accuracies else "test accuracy not measured"
    elif n.test is None:
        accuracy = "test accuracy not measured"
    else:
        t = n.test
        spread = "" if t.std is None else f" +- {t.std:.3f}"
        low_high = t.decision.interval
        interval = "" if low_high is None else f" [{100 * low_high[0]:+.1f}, {100 * low_high[1]:+.1f}]"
        said = f"{t.decision.outcome} after {t.decision.seeds} seeds; {t.decision.words().rsplit('; ', 1)[1]}"
        accuracy = f"test {t.accuracy:.3f}{spread}, {100 * t.difference:+.1f} points{interval} ({said})"
    flops = "" if n.flops is None else f"; {n.flops / 1e6:.1f} MFLOPs"
    narrowed = best.reference(NARROWED)
    if n.latency_ms and n.speedup:
        timed = f"; {n.latency_ms:.2f} ms tuned, {n.speedup:.2f}x the original"
        if narrowed is not None and narrowed.speedup and n.kind != NARROWED:
            timed += f", {n.speedup / narrowed.speedup:.2f}x the narrowed"
        timed += "" if n.torch_ms is None else f"; PyTorch eager {n.torch_ms:.2f} ms"
        timed += "" if n.timed_alone else " (timed while other jobs ran)"
    else:
        timed = "; not timed" if n.stage in ("tuned", "tested", "within margin") else f"; {n.stage}"
    name = f"{n.name} (survivor)" if n.kind == SURVIVOR else n.name
    return f"{name}: {accuracy}{flops}{timed}"


def headline(best: Best, margin: float) -> str:
    """The survivor's speedup over the narrowed original at equal accuracy, or plainly why there
    is none (a speedup whose timing is in doubt gives none)."""
    limit = margin_words(margin)
    s, narrowed = best.survivor, best.reference(NARROWED)
    ours, theirs = s.test, None if narrowed is None else narrowed.test
    missing = [
        what
        for what, absent in (
            (f"{s.name}'s test accuracy", ours is None),
            (f"{s.name}'s tuned speedup", not s.speedup),
            ("the FLOPs-matched original", narrowed is None),
            ("its test accuracy", narrowed is not None and theirs is None),
            ("its tuned speedup", narrowed is not None and not narrowed.speedup),
        )
        if absent
    ]
    if missing:
        return f"no headline yet: {', '.join(missing)} not measured"
    doubtful = [f"{n.name}'s ({n.note})" for n in (s, narrowed) if n is not None and n.note]
    if doubtful:
        return f"no headline yet: the timing of {' and '.join(doubtful)} is in doubt; time it again on a quiet machine"
    assert ours is not None and theirs is not None and narrowed is not None and narrowed.speedup and s.speedup
    ratio = s.speedup / narrowed.speedup
    name = narrowed.name
    against = f"{ratio:.2f}x faster than" if ratio >= 1 else f"{1 / ratio:.2f}x slower than"
    if not ours.within:
        also = f"; {name}, of equal FLOPs, is within it" if theirs.within else ""
        return f"no speedup at equal accuracy: {s.name} is not shown within {limit} of the original{also}"
    if not theirs.within:
        return (
            f"{s.name} keeps the original's accuracy where {name}, of equal FLOPs, is not shown to "
            f"(within {limit}); it is {against} it and {s.speedup:.2f}x faster than the original"
        )
    if ratio > 1:
        return (
            f"{ratio:.2f}x faster than {name} at equal accuracy (both within {limit} of the original by the "
            f"test verdict; {s.speedup:.2f}x faster than the original)"
        )
    return f"no speedup at equal accuracy: {name} is as accurate and {1 / ratio:.2f}x faster"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
