"""Paired, interleaved timing (core.compile.rounds): the median's interval from order
statistics, a speedup that holds when load comes and goes, and when a figure is in doubt."""

from __future__ import annotations

import itertools
import random

import pytest

from core.compile.rounds import FEWEST_ROUNDS, Interval, Rounds, free_cores, interleave, median_interval


def test_the_medians_interval_comes_from_order_statistics():
    assert median_interval([1.0] * (FEWEST_ROUNDS - 1)) is None  # no 95% interval below six values
    assert median_interval([5, 1, 3, 2, 6, 4]) == (1, 6)  # n = 6: the extremes cover 96.9%
    values = list(range(1, 21))  # n = 20: the 6th and 15th values (coverage 95.9%)
    assert median_interval(values) == (6, 15)
    rng = random.Random(1)  # the interval covers the true median about 95% of the time
    covered = sum(
        low <= 0 <= high
        for low, high in (median_interval([rng.gauss(0, 1) for _ in range(15)]) for _ in range(2000))  # type: ignore[misc]
    )
    assert 0.93 < covered / 2000 < 0.99


def _loaded_timers(slow_rounds: set[int], kernel_s: float = 1e-4, torch_s: float = 3e-4):
    """A kernel and a reference whose every call slows 20-fold in the rounds named (a busy
    machine), counted by the kernel's calls, so both sides of a round meet the same load."""
    state = {"round": -1}

    def kernel(number: int) -> float:
        state["round"] += 1
        return number * kernel_s * (20 if state["round"] in slow_rounds else 1)

    def torch(number: int) -> float:
        return number * torch_s * (20 if state["round"] in slow_rounds else 1)

    return {"kernel": kernel, "torch": torch}


def test_a_load_that_comes_and_goes_does_not_move_the_speedup():
    """Timed one after the other, the load of some rounds would decide the speedup (0.15x or
    60x); paired round by round it reads 3x, with a narrow interval."""
    rounds = interleave(_loaded_timers({2, 3, 7, 11, 12}), min_repeat_ms=0.0, reference="torch", cap_s=5)
    speedup = rounds.speedup("kernel")
    assert speedup is not None and speedup.median == pytest.approx(3.0)
    assert speedup.low == pytest.approx(3.0) and speedup.high == pytest.approx(3.0)
    assert speedup.doubt("the speedup") == "" and len(rounds.runs_ms["kernel"]) >= FEWEST_ROUNDS
    assert rounds.latency_ms("kernel") == pytest.approx(0.1)  # the fastest round, not a loaded one
    assert rounds.fastest() == "kernel"


def test_rounds_go_on_until_the_interval_is_narrow_and_stop_at_the_cap():
    noise = itertools.cycle([1.0, 1.5, 0.7, 1.3, 0.8, 1.2, 0.9])  # each side on its own: ratios spread

    def jittery(number: int) -> float:
        return number * 1e-4 * next(noise)

    rounds = interleave({"a": jittery, "b": jittery}, 0.0, reference="b", min_rounds=3, precision=0.01, cap_s=0.2)
    speedup = rounds.speedup("a")
    assert speedup is not None and len(rounds.runs_ms["a"]) > FEWEST_ROUNDS  # went on past the fewest
    assert speedup.width > 1.01  # never reached the precision: stopped by the cap
    assert "95% interval is wider than +-12%" in speedup.doubt("the speedup over PyTorch")


def test_a_figure_without_an_interval_is_in_doubt():
    few = Interval.of([1.0, 2.0, 3.0])
    assert few.low is None and few.doubt("the speedup") == "the speedup has no 95% interval (fewer than 6 rounds)"
    wide = Interval(3.0, 1.0, 9.0)
    assert wide.doubt("the speedup over PyTorch") == (
        "the speedup over PyTorch's 95% interval is wider than +-12%: 3 [1, 9]"
    )
    assert Rounds({"a": (1.0,) * 6}, None).speedup("a") is None  # no reference: no speedup


def test_timing_threads_set_tvm_and_torch_alike_and_restore_them():
    torch = pytest.importorskip("torch")
    tvm = pytest.importorskip("tvm")
    from core.compile.target import timing_threads

    before = torch.get_num_threads()
    tvm_threads = tvm.get_global_func("runtime.NumThreads")
    with timing_threads(1) as count:
        assert count == 1 and torch.get_num_threads() == 1 and tvm_threads() == 1
    assert torch.get_num_threads() == before
    assert 1 <= free_cores(4, sample_s=0.05) <= 4


def test_each_side_runs_on_its_faster_thread_count():
    torch = pytest.importorskip("torch")
    tvm = pytest.importorskip("tvm")
    from core.compile.rounds import thread_counts
    from core.compile.target import at_threads, fastest_threads, timing_threads

    assert thread_counts(1) == (1,) and thread_counts(2) == (1, 2) and thread_counts(6) == (1, 3, 6)
    assert thread_counts(16) == (1, 2, 4, 8, 16)
    tvm_threads = tvm.get_global_func("runtime.NumThreads")
    seen = []

    def timer(number: int) -> float:  # seconds a call "takes" on the count it runs on: one thread is faster
        seen.append((torch.get_num_threads(), int(tvm_threads())))
        return number * (1.0 if seen[-1][0] == 1 else 1.5)

    with timing_threads(2):
        pool = int(tvm_threads())  # TVM's pool never grows past the size it started with (TVM_NUM_THREADS)
        assert at_threads(timer, 1)(3) == 3.0 and seen[-1] == (1, 1)  # both runtimes on the side's count
        assert at_threads(timer, 2)(3) == 4.5 and seen[-1] == (2, pool)
        assert fastest_threads(timer, 2, min_repeat_ms=0.0) == 1
        assert fastest_threads(lambda n: 3.0 * n - timer(n), 2, 0.0) == 2  # now two threads are faster
        seen.clear()
        assert fastest_threads(timer, 1, 0.0) == 1 and not seen  # one free thread: no choice, nothing timed
