"""Real TVM RPC trackers and servers for the device tests, on 127.0.0.1 ONLY (never any other
address), started as the user starts them (`tessera device tracker` / `serve` processes) and
stopped by process id together with every process under them (TVM's popen_worker listener,
its session processes). Also job handlers that fail the way a lost device does."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from core.devices import SessionLost
from tests.support import ROOT

LOOPBACK = "127.0.0.1"
HERE = "tests.core.rpc_loopback"


def free_port() -> int:
    """A port nothing listens on now (the OS's choice) on loopback."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def tessera(*args: str, log: Path) -> subprocess.Popen:
    """`tessera ARGS` as a long-running process, output to `log`."""
    with open(log, "w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def tree(process: subprocess.Popen) -> list[psutil.Process]:
    """The process and everything under it, now."""
    try:
        root = psutil.Process(process.pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def sessions(server: subprocess.Popen) -> list[psutil.Process]:
    """The session processes of a `tessera device serve` process: those under TVM's listener
    (the `tvm.exec.popen_worker` process in its tree), one per connected client."""
    for process in tree(server):
        with contextlib.suppress(psutil.NoSuchProcess):
            if "tvm.exec.popen_worker" in " ".join(process.cmdline()):
                return process.children(recursive=True)
    return []


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM, grace: float = 15.0) -> list[int]:
    """Send `sig` to the process, give it `grace` s to end with its children, then SIGKILL whatever
    of its tree (as it was when signalled) is left. Returns the pids that had to be killed."""
    procs = tree(process)
    if process.poll() is None:
        process.send_signal(sig)
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    process.wait(timeout=5)
    return [proc.pid for proc in alive]


def wait_for(condition, timeout: float, what: str, *watched: subprocess.Popen):
    """condition()'s first true value; fails after `timeout` s, or at once if a `watched` process ends."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        ended = [p for p in watched if p.poll() is not None]
        if ended:
            raise AssertionError(
                f"{' '.join(ended[0].args[2:])} ended (code {ended[0].returncode}) while waiting for {what}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)
    return value


def key_status(port: int, key: str):
    from core.devices.session import key_status as status  # TVM
    from core.devices.session import tracker_summary

    return status(tracker_summary(LOOPBACK, port, 5.0), key)


@dataclass
class Cluster:
    """A tracker and servers of one key, all on loopback."""

    folder: Path
    port: int
    key: str
    tracker: subprocess.Popen
    servers: list[subprocess.Popen] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def device(self, name: str = "loop", **settings) -> dict:
        """A device description (core.devices.Device.to_dict()) for this cluster's key."""
        return {
            "name": name,
            "kind": "rpc",
            "tracker_host": LOOPBACK,
            "tracker_port": self.port,
            "key": self.key,
            "target": {"kind": "llvm"},
            "session_timeout": 120.0,
            "wait": 30.0,
            **settings,
        }

    def serve(self, key: str | None = None) -> subprocess.Popen:
        port = free_port()
        server = tessera(
            "device",
            "serve",
            "--tracker",
            self.address,
            "--key",
            key or self.key,
            "--host",
            LOOPBACK,
            "--port",
            str(port),
            "--threads",
            "1",
            log=self.folder / f"server-{port}.log",
        )
        self.servers.append(server)
        return server

    def busy_server(self) -> subprocess.Popen | None:
        """The server running a session now (its listener has a session process under it)."""
        for server in self.servers:
            if server.poll() is None and sessions(server):
                return server
        return None

    def stop(self) -> list[int]:
        """Stop everything; the pids that did not end by themselves on SIGTERM."""
        leftovers = [pid for server in self.servers for pid in stop(server)]
        return leftovers + stop(self.tracker)


def start_cluster(folder: Path, key: str, servers: int) -> Cluster:
    port = free_port()
    tracker = tessera("device", "tracker", "--host", LOOPBACK, "--port", str(port), log=folder / "tracker.log")
    cluster = Cluster(folder, port, key, tracker)
    try:
        wait_for(lambda: "tracker listening" in (folder / "tracker.log").read_text(), 60, "the tracker", tracker)
        for _ in range(servers):
            cluster.serve()
        wait_for(
            lambda: key_status(port, key).free == servers,
            60,
            f"{servers} servers to register",
            tracker,
            *cluster.servers,
        )
    except BaseException:
        cluster.stop()
        raise
    return cluster


# -- job handlers (resolved by path in spawned workers) ---------------------------------
def lost_once_job(payload: dict, ctx) -> dict:
    """Loses its device on the first attempt; measures (a real perf_counter time) on the next."""
    if ctx.job.attempts == 1:
        raise SessionLost("device loop: lost the session with server 127.0.0.1:9 (key loopcpu) while timing")
    start = time.perf_counter()
    sum(range(10000))
    return {"latency_ms": (time.perf_counter() - start) * 1e3, "tuned": False}


def always_lost_job(payload: dict, ctx) -> dict:
    raise SessionLost("device loop: lost the session with server 127.0.0.1:9 (key loopcpu) while timing")
