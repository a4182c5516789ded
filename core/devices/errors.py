"""Errors about devices, written for a person: which device, tracker or key, and what to do.
TVM's own exceptions are translated into these; its internal codes never reach a message."""

from __future__ import annotations

from core.errors import TesseraError


class DeviceError(TesseraError):
    """A device description is invalid, names an unknown device, or the device refused the work."""


class DeviceUnavailable(DeviceError):
    """The tracker or every server of the device's key could not be reached in time.

    `retryable`: a measurement job failing with it goes back to the queue (core.jobs.outcomes)
    and runs again while attempts remain, when the device may be back."""

    retryable = True


class SessionLost(DeviceError):
    """The session with a server broke mid-run (the server died, rebooted or dropped the
    connection). Retryable like DeviceUnavailable: the next attempt asks the tracker for a
    new session, which it gives to another free server with the same key."""

    retryable = True
