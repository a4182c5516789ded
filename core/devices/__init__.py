"""Devices that measure kernels: this machine's CPU and RPC devices behind a TVM tracker.

Light to import (no TVM): the Device record (device.py), its errors (errors.py), and the
registry over a results store (registry.py). TVM is imported only by session.py (tracker
and sessions), core.compile.health's check_call (run it through core.jobs.isolate.call_in_subprocess)
and serving.py (`tessera device tracker|serve`)."""

from .device import LOCAL, LOCAL_NAME, Device, parse_address
from .errors import DeviceError, DeviceUnavailable, SessionLost
from .registry import add_device, default_device, get_device, list_devices, record_check, remove_device, set_default

__all__ = [
    "LOCAL",
    "LOCAL_NAME",
    "Device",
    "DeviceError",
    "DeviceUnavailable",
    "SessionLost",
    "add_device",
    "default_device",
    "get_device",
    "list_devices",
    "parse_address",
    "record_check",
    "remove_device",
    "set_default",
]
