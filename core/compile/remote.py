"""Kernels on an RPC device: compile for its target here, run them there. A kernel is
exported as a tar of object files (so no cross-linker is needed here: the server links it),
uploaded and loaded; core.compile.place.RpcDevice measures with these, and the device health
check (core.compile.health) makes one round trip with a tiny kernel. Imports TVM: worker
processes only."""

from __future__ import annotations

import json
import time

import numpy as np
import tvm
from tvm import te
from tvm.s_tir import dlight
from tvm.support import utils
from tvm.support.tar import tar

from ..devices.device import Device
from ..devices.errors import DeviceError
from ..devices.session import Session, open_session


def device_target(device: Device, session: Session) -> tvm.target.Target:
    """The device's TVM target; an LLVM CPU target without "num-cores" gets the server's thread count."""
    if device.target is None:
        raise DeviceError(f"device {device.name} has no TVM target to compile for")
    config = dict(device.target)
    try:
        if config["kind"] == "llvm" and "num-cores" not in config:
            config["num-cores"] = session.num_threads()
    except RuntimeError as exc:
        raise session.translate(exc, "asking for its thread count") from None
    try:
        return tvm.target.Target(config)
    except (ValueError, RuntimeError, TypeError) as exc:
        message = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
        raise DeviceError(
            f"device {device.name}: TVM does not accept its target "
            f"{json.dumps(device.target, sort_keys=True)}: {message[-1].strip()}"
        ) from None


def default_schedule(mod: tvm.IRModule, target: tvm.target.Target) -> tvm.IRModule:
    """An untuned kernel as it can run on the target: as lowered for a CPU; for a GPU, with
    dlight's fallback schedule binding its loops to blocks and threads (TVM refuses unbound ones)."""
    if "gpu" not in target.keys:
        return mod
    with target:
        return dlight.ApplyDefaultSchedule(dlight.gpu.Fallback())(mod)


def upload(session: Session, executable, target: tvm.target.Target):
    """Export a built kernel as a tar of objects, upload it, have the server link and load it."""
    folder = utils.tempdir()
    path = folder.relpath("kernel.tar")
    executable.export_library(path, fcompile=tar)
    try:
        session.remote.upload(path)
        return session.remote.load_module("kernel.tar")
    except RuntimeError as exc:
        raise session.translate(exc, "uploading the kernel") from None


def round_trip(device: Device, timeout: float) -> float:
    """Milliseconds for a tiny kernel's round trip to the device: a session from the tracker,
    upload, link, run, result back (the build here is not counted). Its output is checked."""
    n = 256
    a = te.placeholder((n,), "float32", name="a")
    b = te.compute((n,), lambda i: a[i] * 2.0 + 1.0, name="b")
    mod = tvm.IRModule({"main": te.create_prim_func([a, b])})
    data = np.arange(n, dtype="float32")
    started = time.perf_counter()
    session = open_session(device, timeout)
    opened = time.perf_counter()
    target = device_target(device, session)
    executable = tvm.compile(default_schedule(mod, target), target=target)
    sent = time.perf_counter()
    module = upload(session, executable, target)
    try:
        dev = session.device_for(target)
        out = tvm.runtime.empty((n,), "float32", dev)
        module["main"](tvm.runtime.tensor(data, dev), out)
        result = out.numpy()
    except RuntimeError as exc:
        raise session.translate(exc, "running the check kernel") from None
    finished = time.perf_counter()
    if not np.allclose(result, data * 2 + 1):
        raise DeviceError(f"device {device.name}: the check kernel computed wrong numbers on server {session.server}")
    return (opened - started + finished - sent) * 1e3
