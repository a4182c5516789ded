"""What a device is: this machine's CPU, or an RPC device reached through a TVM tracker
(tracker address, the key its servers register under, the TVM target to compile for).

A Device is plain data and imports nothing heavy, so the CLI and the GUI can list, add and
validate devices without TVM; `to_dict()` is the JSON that crosses to worker processes
(a measure job's "device_config", core.compile.health.check_call's `config`)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace

from core.errors import shown

from .errors import DeviceError

LOCAL_NAME = "local"
KINDS = ("local", "rpc")
#: TVM target kinds a device may have; CPUs compile with LLVM, the others are GPUs
TARGET_KINDS = ("llvm", "cuda", "rocm", "opencl", "vulkan", "metal")
DEFAULT_TARGET = {"kind": "llvm"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")  # also a folder name (tuning databases)
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")  # TVM joins keys with ':' and options with ' '
_HOST = re.compile(r"[A-Za-z0-9_.:-]{1,253}")
_PORT = re.compile(r"[0-9]{1,5}")
#: the longest session or wait for a server a device may be given, s
MAX_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class Device:
    """A device as stored. For kind 'rpc': tracker_host/tracker_port/key say where its servers
    are, `target` what to compile for (a TVM target dict; an LLVM CPU target without
    "num-cores" gets the server's thread count when a job starts), `session_timeout` how long
    one session (one measurement, one tuning trial) may last, `wait` how long a job waits for
    a free server of the key before giving up (and being retried later)."""

    name: str
    kind: str = "local"
    tracker_host: str | None = None
    tracker_port: int | None = None
    key: str | None = None
    target: dict | None = None
    session_timeout: float = 120.0
    wait: float = 60.0
    # as the store knows it
    id: int | None = field(default=None, compare=False)
    default: bool = field(default=False, compare=False)
    last_check: dict | None = field(default=None, compare=False)

    @property
    def is_local(self) -> bool:
        return self.kind == "local"

    @property
    def tracker(self) -> str | None:
        """'HOST:PORT' of the tracker (None for the local device)."""
        return None if self.is_local else join_address(self.tracker_host or "", self.tracker_port or 0)

    def describe(self) -> str:
        """'this machine's CPU' or 'key rasp4 at tracker 10.0.0.5:9190, target {...}'."""
        if self.is_local:
            return "this machine's CPU"
        return f"key {self.key} at tracker {self.tracker}, target {json.dumps(self.target, sort_keys=True)}"

    def to_dict(self) -> dict:
        """The description (no store bookkeeping), as JSON; Device.from_dict reads it back."""
        if self.is_local:
            return {"name": self.name, "kind": self.kind}
        return {
            "name": self.name,
            "kind": self.kind,
            "tracker_host": self.tracker_host,
            "tracker_port": self.tracker_port,
            "key": self.key,
            "target": dict(self.target or {}),
            "session_timeout": self.session_timeout,
            "wait": self.wait,
        }

    def job_fields(self) -> dict:
        """What a measure job's payload carries about its device (core.compile.handlers.measure_job):
        the name, and for an RPC device its whole description, so the worker needs no store."""
        return {"device": self.name} if self.is_local else {"device": self.name, "device_config": self.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> Device:
        """A validated Device from to_dict()'s JSON; DeviceError naming the field at fault."""
        if not isinstance(data, dict):
            raise DeviceError(f"a device description must be an object, got {data!r}")
        known = {"name", "kind", "tracker_host", "tracker_port", "key", "target", "session_timeout", "wait"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise DeviceError(f"unknown device field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        name = check_name(data.get("name"))
        kind = data.get("kind", "local")
        if kind not in KINDS:
            raise DeviceError(f"device {name}: kind must be 'local' or 'rpc', got {kind!r}")
        if kind == "local":
            if name != LOCAL_NAME or set(data) - {"name", "kind"}:
                raise DeviceError(f"device {name}: only '{LOCAL_NAME}' is a local device, and it has no settings")
            return LOCAL
        if name == LOCAL_NAME:
            raise DeviceError(f"'{LOCAL_NAME}' is this machine's CPU; give the RPC device another name")
        host, port = check_host(data.get("tracker_host"), name), check_port(data.get("tracker_port"), name)
        return cls(
            name,
            kind,
            host,
            port,
            check_key(data.get("key"), name),
            check_target(data.get("target", DEFAULT_TARGET), name),
            _seconds(data.get("session_timeout", cls.session_timeout), "session_timeout", name),
            _seconds(data.get("wait", cls.wait), "wait", name),
        )

    def stored(self, row_id: int, default: bool, last_check: dict | None) -> Device:
        return replace(self, id=row_id, default=default, last_check=last_check)


LOCAL = Device(LOCAL_NAME)


def check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise DeviceError(
            f"device name {shown(name)} must be 1-63 letters, digits, '.', '_' or '-', "
            f"starting with a letter or digit (e.g. rasp4)"
        )
    return name


def check_key(key, device: str) -> str:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise DeviceError(
            f"device {device}: the key {shown(key)} must be 1-63 letters, digits, '.', '_' or '-' "
            f"(the --key its servers were started with, e.g. rasp4)"
        )
    return key


def check_host(host, device: str) -> str:
    if not isinstance(host, str) or not _HOST.fullmatch(host):
        raise DeviceError(f"device {device}: tracker host {shown(host)} must be a host name or IP address")
    return host


def check_port(port, device: str) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise DeviceError(f"device {device}: tracker port {shown(port)} must be a whole number from 1 to 65535")
    return port


def check_target(target, device: str) -> dict:
    """A TVM target as a dict, e.g. {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72"}.
    Only its shape is checked here (TVM is not imported); a health check or a job builds with it."""
    if isinstance(target, str):
        try:
            target = json.loads(target)
        except ValueError:
            raise DeviceError(
                f"device {device}: the target must be JSON such as "
                f'{{"kind": "llvm", "mtriple": "aarch64-linux-gnu"}}, got {shown(target)}'
            ) from None
    if not isinstance(target, dict) or target.get("kind") not in TARGET_KINDS:
        raise DeviceError(
            f'device {device}: the target must be an object whose "kind" is one of '
            f"{', '.join(TARGET_KINDS)}, got {shown(target)}"
        )
    for key, value in target.items():
        scalar = isinstance(value, (str, int, float, bool))
        if not isinstance(key, str) or not (
            scalar or (isinstance(value, list) and all(isinstance(v, (str, int)) for v in value))
        ):
            raise DeviceError(
                f"device {device}: target field {shown(key)} must be a string, number, flag or list, got {shown(value)}"
            )
    return dict(target)


def parse_address(text: str, what: str = "--tracker") -> tuple[str, int]:
    """'HOST:PORT' -> (host, port), e.g. '127.0.0.1:9190' or '[::1]:9190' (an IPv6 address in
    brackets). The port is ASCII digits only: '²' or Arabic-Indic digits are not a port."""
    host, sep, port = (text or "").rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:  # an IPv6 address needs its brackets, or its last group reads as the port
        host = ""
    if not sep or not _HOST.fullmatch(host) or not _PORT.fullmatch(port) or not 1 <= int(port) <= 65535:
        raise DeviceError(f"{what} must be HOST:PORT such as 127.0.0.1:9190 or [::1]:9190, got {shown(text)}")
    return host, int(port)


def parse_port(text: str) -> int:
    """A port typed as text: 1 to 65535 in ASCII digits; DeviceError otherwise."""
    if not _PORT.fullmatch(text or "") or not 1 <= int(text) <= 65535:
        raise DeviceError(f"a port is a whole number from 1 to 65535 in the digits 0-9, got {shown(text)}")
    return int(text)


def join_address(host: str, port: int) -> str:
    """(host, port) -> 'HOST:PORT', an IPv6 address in brackets: what parse_address reads back."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _seconds(value, key: str, device: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value <= MAX_SECONDS
    ):
        raise DeviceError(
            f"device {device}: {key} must be a number of seconds above 0 and at most {MAX_SECONDS:,} (a week), "
            f"got {shown(value)}"
        )
    return float(value)
