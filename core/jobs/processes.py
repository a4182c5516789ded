"""Small facts about OS processes that the isolation helper, workers and supervisor share:
how a process ended, whether a recorded pid is still that process, how to kill it with
everything it started (TVM's builders and RPC servers run in child processes)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

import psutil

PR_SET_PDEATHSIG = 1  # prctl option: the signal this process gets when its parent dies
#: exit code of a runner that stopped because the store must not be written (damaged, read-only)
STORE_REFUSED = 4
#: exit code of a runner that stopped because the disk holding the store is full
STORE_FULL = 5
_CODES = {
    0: "exited without an answer",
    STORE_REFUSED: "stopped: the results store cannot be written",
    STORE_FULL: "stopped: the disk holding the results store is full",
}


def describe_exit(exitcode: int | None) -> str:
    """Exit code of multiprocessing.Process -> 'killed by signal SIGKILL' / 'exited with code 3'."""
    if exitcode is None:
        return "is still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by signal {name}"
    return _CODES.get(exitcode, f"exited with code {exitcode}")


def enter_own_group() -> None:
    """Make the calling (child) process lead a new process group, so kill_tree reaches its
    children, and make the group end when its parent dies (a crash, a SIGKILL): on Linux the
    kernel sends SIGTERM then (PR_SET_PDEATHSIG), which here kills the whole group."""
    parent = os.getppid()
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, _end_group)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the request was made
        _end_group()


def _end_group(*_) -> None:
    os.killpg(0, signal.SIGKILL)


def kill_tree(process) -> None:
    """SIGKILL a child multiprocessing.Process with its whole process group, then reap it.

    The group goes first (it outlives a dead leader while members remain);
    the pid itself is signalled only while unreaped, so it cannot be a reused one.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.exitcode is None:
        process.kill()
    process.join()


def pid_alive(pid: int, started_before: float | None = None) -> bool:
    """True if `pid` runs and is not a zombie; with `started_before` (epoch seconds), a process
    created later is a different one that reused the pid, so it counts as dead."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return started_before is None or proc.create_time() <= started_before + 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True
