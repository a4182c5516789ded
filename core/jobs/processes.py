"""Small facts about OS processes that the isolation helper, workers and supervisor share:
how a process ended, whether a recorded pid is still that process, how to kill it with
everything it started (TVM's builders and RPC servers run in child processes)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time

import psutil

PARENT_WATCH = 0.2  # s between a child's looks at whether its parent is still there
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
    children, and make the group end when its parent dies (a crash, a SIGKILL, `timeout`'s
    SIGTERM) or when it gets SIGTERM itself. A thread watches for the parent's death: a signal
    handler would wait for the main thread to leave the C code it is in (LLVM can build for
    minutes), while the thread runs whenever that code releases the GIL, as TVM's calls do."""
    creator = multiprocessing.parent_process()  # known even if it died before this line
    parent = os.getppid() if creator is None else creator.pid
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, end_group)
    threading.Thread(target=_watch_parent, args=(parent,), name="parent watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_WATCH)
    end_group()


def end_group(*_) -> None:
    """End this process with its whole group (it leads one: enter_own_group), at once."""
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
