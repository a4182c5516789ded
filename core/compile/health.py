"""A device's health check, run in a spawned process through core.jobs.isolate.call_in_subprocess
(it imports TVM): is the tracker there, how many servers of the key are free, busy or
asked for, and how long a tiny kernel's round trip to one of them takes."""

from __future__ import annotations

import time

from ..devices.device import Device
from ..devices.errors import DeviceError

#: the keys of check_call's answer, each None (or False) when the check did not get that far
ANSWER_KEYS = ("reachable", "free", "busy", "pending", "round_trip_ms", "error", "checked")


def check_call(config: dict, timeout: float) -> dict:
    """Check the device described by `config` (Device.to_dict()) within about `timeout` s.

    Returns {"reachable": bool (the tracker answered), "free"/"busy"/"pending": int | None
    (servers of the key; requests waiting), "round_trip_ms": float | None, "error": str | None
    (a plain sentence), "checked": unix time}. Device problems are answers, not exceptions;
    the local CPU is always reachable and has no tracker to ask."""
    answer = dict.fromkeys(ANSWER_KEYS)
    answer.update(reachable=False, checked=time.time())
    deadline = time.monotonic() + timeout
    try:
        device = Device.from_dict(config)
        if device.is_local:
            answer["reachable"] = True
            return answer
        from ..devices.session import key_status, no_server_error, tracker_summary
        from .remote import round_trip  # TVM: only in this (spawned) process

        summary = tracker_summary(device.tracker_host or "", device.tracker_port or 0, timeout)  # set for RPC devices
        status = key_status(summary, device.key or "")
        answer.update(reachable=True, free=status.free, busy=status.busy, pending=status.pending)
        if status.servers == 0:
            raise no_server_error(device, summary)
        answer["round_trip_ms"] = round_trip(device, max(deadline - time.monotonic(), 1.0))
    except DeviceError as exc:
        answer["error"] = str(exc)
    return answer
