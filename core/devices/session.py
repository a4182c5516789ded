"""Talking to a TVM RPC tracker and its servers, with time limits and plain-language errors.

TVM's own client (tvm.rpc.TrackerSession) retries a refused tracker for 60 s and waits
for a free server forever; here every step has a deadline, and each failure becomes a
DeviceError that says which tracker, key or server, never TVM's internal codes. The
tracker protocol itself (tvm.rpc.base: a magic number, then length-prefixed JSON) is
TVM's. This module imports TVM: it runs in worker processes only."""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass

import tvm
from tvm import rpc
from tvm.rpc import base

from .device import Device
from .errors import DeviceError, DeviceUnavailable, SessionLost

_RETRY_PAUSE = 1.0  # s between attempts while waiting for a tracker or a server


@dataclass(frozen=True)
class KeyStatus:
    """What a tracker says about one key: servers registered, free, busy (in a session), and
    requests waiting for one of them."""

    servers: int
    free: int
    pending: int

    @property
    def busy(self) -> int:
        return max(self.servers - self.free, 0)


def tracker_summary(host: str, port: int, timeout: float) -> dict:
    """The tracker's summary ({"queue_info": {key: {"free", "pending"}}, "server_info": [...]});
    DeviceUnavailable if it cannot be reached within `timeout` s."""
    with _tracker(host, port, timeout) as sock:
        return _summary(sock, host, port)


def key_status(summary: dict, key: str) -> KeyStatus:
    servers = sum(1 for info in summary.get("server_info", []) if info.get("key") == f"server:{key}")
    queue = summary.get("queue_info", {}).get(key, {})
    return KeyStatus(servers, int(queue.get("free", 0)), int(queue.get("pending", 0)))


def no_server_error(device: Device, summary: dict) -> DeviceError:
    """'tracker 127.0.0.1:9190 has no server with key rasp5 (keys with servers there: rasp4)'."""
    keys = sorted(
        {
            info["key"].partition(":")[2]
            for info in summary.get("server_info", [])
            if str(info.get("key", "")).startswith("server:")
        }
    )
    there = f"keys with servers there: {', '.join(keys)}" if keys else "no server is registered there at all"
    return DeviceError(
        f"tracker {device.tracker} has no server with key {device.key} ({there}); start one "
        f"with `tessera device serve --tracker {device.tracker} --key {device.key}`"
    )


@dataclass
class Session:
    """An open RPC session with one server of a device."""

    device: Device
    server: str  # 'HOST:PORT' of the server the tracker handed out
    remote: rpc.RPCSession

    def num_threads(self) -> int:
        """Threads of the server's TVM runtime (TVM_NUM_THREADS there; `tessera device serve` sets it)."""
        return int(self.remote.get_function("runtime.NumThreads")())

    def device_for(self, target: tvm.target.Target):
        """The server's device that runs kernels built for `target` (its CPU, its GPU)."""
        return self.remote.device(target.get_target_device_type(), 0)

    def alive(self) -> bool:
        try:
            self.num_threads()
            return True
        except (RuntimeError, OSError):
            return False

    def translate(self, exc: BaseException, doing: str) -> DeviceError:
        """The DeviceError for a TVM exception raised while `doing` something on this session."""
        if "RPCSessionTimeoutError" in str(exc):
            return DeviceError(
                f"device {self.device.name}: the session on server {self.server} lasted longer than the "
                f"device's session timeout of {self.device.session_timeout:g} s while {doing}, so the server "
                f"ended it; allow more with `tessera device add {self.device.name} ... --session-timeout S --replace`"
            )
        if not self.alive():
            return SessionLost(
                f"device {self.device.name}: lost the session with server {self.server} "
                f"(key {self.device.key}) while {doing}: the server died, restarted or dropped "
                f"the connection"
            )
        return DeviceError(f"device {self.device.name}: server {self.server} failed while {doing}: {_last_line(exc)}")


def open_session(device: Device, wait: float) -> Session:
    """A session with a free server of `device`'s key, waiting up to `wait` s for the tracker
    to answer, for a server of the key to register and for one to be free. DeviceUnavailable
    (retryable) if none came in time, saying why."""
    deadline = time.monotonic() + wait
    while True:
        remaining = max(deadline - time.monotonic(), 0.01)
        try:
            return _request(device, remaining, wait)
        except DeviceUnavailable as exc:
            problem = exc
        if time.monotonic() + _RETRY_PAUSE > deadline:
            raise problem
        time.sleep(_RETRY_PAUSE)


def _request(device: Device, timeout: float, wait: float) -> Session:
    """One try, for at most `timeout` s of the `wait` open_session allows: ask the tracker for a
    server of the key and connect to it."""
    host, port, key = device.tracker_host or "", device.tracker_port or 0, device.key or ""  # set for RPC devices
    started = time.monotonic()
    with _tracker(host, port, timeout) as sock:
        summary = _summary(sock, host, port)
        if key_status(summary, key).servers == 0:
            raise DeviceUnavailable(str(no_server_error(device, summary)))
        try:
            sock.settimeout(max(timeout - (time.monotonic() - started), 0.01))
            base.sendjson(sock, [base.TrackerCode.REQUEST, key, "", 1])
            answer = base.recvjson(sock)
        except TimeoutError:
            busy = key_status(tracker_summary(host, port, 5.0), key).busy
            raise DeviceUnavailable(f"no free device for key {key} after {wait:g} s ({busy} busy)") from None
        except OSError:
            raise DeviceUnavailable(
                f"tracker {device.tracker} closed the connection while we waited for a server with key {key}"
            ) from None
    if not (isinstance(answer, list) and answer and answer[0] == base.TrackerCode.SUCCESS):
        raise DeviceError(f"tracker {device.tracker} refused a request for key {key}")
    server_host, server_port, match = answer[1]
    server = f"{server_host}:{server_port}"
    try:
        remote = rpc.connect(server_host, server_port, match, session_timeout=device.session_timeout)
    except (RuntimeError, OSError):
        raise DeviceUnavailable(
            f"server {server} (key {key}) did not accept a session; the tracker "
            f"still listed it, so it may just have died"
        ) from None
    return Session(device, server, remote)


class _tracker:
    """A connection to a tracker, handshake done; a context manager giving the socket."""

    def __init__(self, host: str, port: int, timeout: float):
        self.host, self.port, self.timeout = host, port, timeout
        self.sock: socket.socket | None = None

    def __enter__(self) -> socket.socket:
        where = f"{self.host}:{self.port}"
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            self.sock.sendall(struct.pack("<i", base.RPC_TRACKER_MAGIC))
            magic = struct.unpack("<i", base.recvall(self.sock, 4))[0]
        except ConnectionRefusedError:
            self._close()
            raise DeviceUnavailable(f"tracker {where} refused the connection") from None
        except TimeoutError:
            self._close()
            raise DeviceUnavailable(f"tracker {where} did not answer within {self.timeout:g} s") from None
        except socket.gaierror:
            self._close()
            raise DeviceUnavailable(f"cannot find the tracker's host {self.host} (unknown name)") from None
        except OSError as exc:
            self._close()
            raise DeviceUnavailable(f"cannot reach tracker {where}: {exc.strerror or exc}") from None
        if magic != base.RPC_TRACKER_MAGIC:
            self._close()
            raise DeviceError(f"{where} answered, but it is not a TVM RPC tracker")
        return self.sock

    def __exit__(self, *exc) -> None:
        self._close()

    def _close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def _summary(sock: socket.socket, host: str, port: int) -> dict:
    try:
        base.sendjson(sock, [base.TrackerCode.SUMMARY])
        answer = base.recvjson(sock)
    except OSError:
        raise DeviceUnavailable(f"tracker {host}:{port} closed the connection before answering") from None
    if not (isinstance(answer, list) and len(answer) == 2 and answer[0] == base.TrackerCode.SUCCESS):
        raise DeviceError(f"tracker {host}:{port} did not give its summary")
    return answer[1]


def _last_line(exc: BaseException) -> str:
    """The last non-empty line of a TVM error (its message; the lines above are TVM's trace)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
