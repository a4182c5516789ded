"""The devices of a results store: list, add, get, remove, the default device, health checks.

Each device is a row of the store's devices table; its `config` JSON holds the description
(Device.to_dict() without name and kind) and the bookkeeping: "default" (true on at most
one row; none means the local CPU), "last_check" (core.compile.health.check_call's answer)
and "removed" (when). Removing a device keeps its row, marked removed, so measurements
made on it still say where they ran; adding the same name again brings the row back.
The local CPU ("local") is always there and always listed first."""

from __future__ import annotations

import time

from core.jobs.queue import QUEUED, RUNNING, JobQueue
from core.store import Store

from .device import LOCAL, LOCAL_NAME, Device, check_name, parse_address
from .errors import DeviceError

_BOOKKEEPING = ("default", "last_check", "removed")


def list_devices(store: Store) -> list[Device]:
    """Every device not removed: the local CPU first, then the others in the order they were added."""
    _ensure_local(store)
    devices = [_device(row) for row in store.devices() if not row["config"].get("removed")]
    return sorted(devices, key=lambda d: (not d.is_local, d.id))


def get_device(store: Store, name: str) -> Device:
    """The device called `name`; DeviceError naming the known ones if there is none."""
    for device in list_devices(store):
        if device.name == name:
            return device
    removed = any(row["name"] == name for row in store.devices())
    known = ", ".join(d.name for d in list_devices(store))
    raise DeviceError(
        f"there is no device called {name!r}{' (it was removed)' if removed else ''} in "
        f"{store.path}; known devices: {known}. Add one with `tessera device add NAME "
        f"--tracker HOST:PORT --key KEY`"
    )


def add_device(
    store: Store,
    name: str,
    tracker: str,
    key: str,
    target: dict | str | None = None,
    *,
    session_timeout: float = Device.session_timeout,
    wait: float = Device.wait,
    replace: bool = False,
) -> Device:
    """Add the RPC device `name` whose servers register with `tracker` ('HOST:PORT') under `key`,
    compiled for `target` (a TVM target dict or its JSON; default {"kind": "llvm"}). An existing
    device of that name is changed only with replace=True (keeping its default flag)."""
    check_name(name)
    host, port = parse_address(tracker)
    description = {
        "name": name,
        "kind": "rpc",
        "tracker_host": host,
        "tracker_port": port,
        "key": key,
        "session_timeout": session_timeout,
        "wait": wait,
    }
    if target is not None:
        description["target"] = target
    device = Device.from_dict(description)
    with store.write():
        row = _row(store, name)
        if row is not None and not row["config"].get("removed"):
            if not replace:
                raise DeviceError(
                    f"device {name} already exists ({_device(row).describe()}); "
                    f"remove it first or replace it (--replace)"
                )
            keep = {"default": row["config"].get("default", False)}
        else:
            keep = {}
        config = {k: v for k, v in device.to_dict().items() if k not in ("name", "kind")}
        store.add_device(name, "rpc", {**config, **keep})
    return get_device(store, name)


def remove_device(store: Store, name: str) -> None:
    """Remove a device from the list. Refused for the local CPU and for a device with queued or
    running jobs. Its measurements stay, still naming it; if it was the default, the local CPU is."""
    if name == LOCAL_NAME:
        raise DeviceError("the local CPU cannot be removed")
    with store.write():
        device = get_device(store, name)
        waiting = [job.id for job in JobQueue(store).jobs((QUEUED, RUNNING)) if job.device_id == device.id]
        if waiting:
            raise DeviceError(
                f"device {name} has queued or running job(s) {', '.join(map(str, waiting))}; "
                f"cancel them first (`tessera jobs cancel ID`)"
            )
        _update(store, name, {"removed": time.time(), "default": False})


def default_device(store: Store) -> Device:
    """The device new jobs run on unless told otherwise: the one marked default, else the local CPU."""
    devices = list_devices(store)
    return next((d for d in devices if d.default), devices[0])


def set_default(store: Store, name: str) -> Device:
    """Make `name` the default device (and no other)."""
    with store.write():
        get_device(store, name)
        for row in store.devices():
            if row["name"] == name or row["config"].get("default"):
                _update(store, row["name"], {"default": row["name"] == name})
    return get_device(store, name)


def record_check(store: Store, name: str, check: dict) -> Device:
    """Keep a health check's answer (core.compile.health.check_call) as the device's last check."""
    with store.write():
        get_device(store, name)
        _update(store, name, {"last_check": dict(check)})
    return get_device(store, name)


def _ensure_local(store: Store) -> None:
    if _row(store, LOCAL_NAME) is None:
        store.add_device(LOCAL_NAME, "local")


def _row(store: Store, name: str) -> dict | None:
    return next((row for row in store.devices() if row["name"] == name), None)


def _update(store: Store, name: str, changes: dict) -> None:
    row = _row(store, name)
    if row is None:  # callers look the device up first; a concurrent removal leaves nothing
        raise DeviceError(f"there is no device called {name!r} in {store.path}")
    store.add_device(name, row["kind"], {**row["config"], **changes})


def _device(row: dict) -> Device:
    config = row["config"]
    bookkeeping = (row["id"], bool(config.get("default")), config.get("last_check"))
    if row["kind"] == "local" and row["name"] == LOCAL_NAME:
        return LOCAL.stored(*bookkeeping)
    description = {k: v for k, v in config.items() if k not in _BOOKKEEPING}
    try:
        return Device.from_dict({"name": row["name"], "kind": row["kind"], **description}).stored(*bookkeeping)
    except DeviceError as exc:
        raise DeviceError(
            f"the store's device row {row['id']} ({row['name']!r}) is not a valid device: {exc}"
        ) from None
