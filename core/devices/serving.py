"""Run TVM's RPC tracker, or an RPC server registered with a tracker, until told to stop.

TVM runs each listener in a child process (tvm.exec.popen_worker), and each session of a
server in a grandchild. Killing only the process that started them leaves them running,
so SIGINT and SIGTERM here stop the listener with everything under it (TVM's own
terminate() kills the child's whole tree) before exiting. A SIGKILL cannot be caught:
whoever sends one must stop the children too (by process id; see tests/core/rpc_fixtures.py).
Both bind to loopback unless given another host. This module imports TVM."""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any, Protocol

from tvm import rpc
from tvm.rpc.tracker import Tracker

from .device import parse_address
from .errors import DeviceError
from .session import tracker_summary

DEFAULT_SERVER_PORTS = (9090, 9199)  # TVM's: the first free port in this range
LOOK_EVERY = 2.0  # s between looks at the listener (and the tracker)
MISSED_LOOKS = 3  # looks without the server registered before it is restarted


class Listener(Protocol):
    """TVM's tracker or server (tvm.rpc.tracker.Tracker, tvm.rpc.server.Server) as run here."""

    proc: Any  # the listener's process (TVM's PopenWorker)

    def terminate(self) -> None: ...


def run_tracker(host: str, port: int, announce: Callable[[str], None] = print) -> None:
    """Serve a tracker on host:port until SIGINT or SIGTERM."""
    _check_free(host, port, "--port")

    def start() -> Tracker:
        tracker = Tracker(host, port=port, port_end=port + 1, silent=True)
        announce(f"tracker listening on {host}:{tracker.port} (process {os.getpid()}); Ctrl-C to stop")
        return tracker

    _serve(start, "the tracker")


def run_server(
    tracker: str, key: str, host: str, port: int | None, threads: int, announce: Callable[[str], None] = print
) -> None:
    """Serve kernels for `key`, registered with `tracker` ('HOST:PORT'), on host:port (the first
    free one of TVM's range if None), with `threads` runtime threads, until SIGINT or SIGTERM.

    TVM's listener is a thread that ends for good when a session process dies (a kernel that
    crashes it, a kill): the server then drops off the tracker while its process lives on. So
    the tracker is asked every few seconds; after three looks without this server, it starts again."""
    tracker_host, tracker_port = parse_address(tracker)
    tracker_summary(tracker_host, tracker_port, 10.0)  # a plain error now rather than TVM retrying for a minute
    if port is not None:
        _check_free(host, port, "--port")
    ports = (port, port + 1) if port is not None else DEFAULT_SERVER_PORTS
    os.environ["TVM_NUM_THREADS"] = str(threads)  # read by the sessions' runtime; reported as "num-cores"

    def start() -> rpc.Server:
        nonlocal ports
        server = rpc.Server(
            host, port=ports[0], port_end=ports[1], key=key, tracker_addr=(tracker_host, tracker_port), silent=True
        )
        ports = (server.port, server.port + 1)  # a restart listens on the same port
        announce(
            f"server for key {key} listening on {host}:{server.port}, registered with tracker "
            f"{tracker_host}:{tracker_port}, {threads} thread(s) (process {os.getpid()}); Ctrl-C to stop"
        )
        return server

    def registered(server: rpc.Server) -> bool:
        try:
            summary = tracker_summary(tracker_host, tracker_port, 5.0)
        except DeviceError:
            return True  # the tracker is away; TVM's listener waits for it (and ends if it takes long)
        return any(
            info.get("key") == f"server:{key}" and list(info.get("addr", ()))[1:] == [server.port]
            for info in summary.get("server_info", [])
        )

    _serve(start, "the server", registered, announce)


def tracker_call(host: str, port: int, progress: Callable[[float, str], None]) -> None:
    """run_tracker in a child of `tessera device tracker` (core.jobs.isolate): that child's process
    group, TVM's listener and its sessions included, ends with the command however it ends (a
    SIGKILL too), so no port is left listening. Announcements arrive as progress messages."""
    run_tracker(host, port, lambda line: progress(0.0, line))


def server_call(
    tracker: str, key: str, host: str, port: int | None, threads: int, progress: Callable[[float, str], None]
) -> None:
    """run_server in a child of `tessera device serve`, like tracker_call."""
    run_server(tracker, key, host, port, threads, lambda line: progress(0.0, line))


def _serve(
    start: Callable[[], Listener],
    what: str,
    healthy: Callable[[Listener], bool] | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Run the listener start() returns until SIGINT/SIGTERM, then stop it with its children
    (TVM's terminate() kills the listener's whole tree). When `healthy(listener)` fails
    MISSED_LOOKS looks in a row, the listener is replaced by a fresh one."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    owner, missed = start(), 0
    try:
        while not stop.wait(LOOK_EVERY):
            if not owner.proc.is_alive():
                raise DeviceError(f"{what}'s listener process ended by itself; see the messages above")
            missed = 0 if healthy is None or healthy(owner) else missed + 1
            if missed >= MISSED_LOOKS:
                announce(f"{what} is no longer registered with the tracker (a session process died?); restarting it")
                owner.terminate()
                owner, missed = start(), 0
    finally:
        owner.terminate()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _check_free(host: str, port: int, option: str) -> None:
    """A clear error now if host:port cannot be listened on (TVM's own is a traceback)."""
    try:
        with socket.create_server((host, port), reuse_port=False) as probe:
            probe.close()
    except OSError as exc:
        raise DeviceError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another {option})") from None
