"""`tessera device ...`: the devices measurements run on. This machine's CPU ("local") is
always there; RPC devices are reached through a TVM tracker (`tracker` starts one, `serve`
makes this machine a device registered with it). `add`, `list`, `check`, `remove` and
`default` work on the device list of the results store (--store PATH, else $TESSERA_STORE,
else the default). Only `tracker`, `serve` and `check`'s spawned process import TVM."""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
import time

from core.devices import (
    Device,
    DeviceError,
    add_device,
    default_device,
    get_device,
    list_devices,
    record_check,
    remove_device,
    set_default,
)
from core.devices.device import parse_port
from core.jobs.isolate import call_in_subprocess
from core.store import Store

from . import options

CHECK_SPAWN_GRACE = 60.0  # s on top of --timeout for the checking process to start and import TVM


def _port(text: str) -> int:
    """argparse's type for a port: ASCII digits only (int() would read '٩١٩٠' as 9190)."""
    try:
        return parse_port(text)
    except DeviceError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parsers(sub) -> None:
    p = sub.add_parser("device", help="devices: this CPU, and RPC devices behind a TVM tracker")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    a = actions.add_parser("tracker", help="run a TVM RPC tracker here until Ctrl-C")
    a.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    a.add_argument("--port", type=_port, default=9190, help="port to listen on (default 9190)")
    a.set_defaults(func=cmd_tracker)

    a = actions.add_parser("serve", help="make this machine a device: a TVM RPC server registered with a tracker")
    a.add_argument(
        "--tracker",
        default="127.0.0.1:9190",
        metavar="HOST:PORT",
        help="the tracker to register with (default 127.0.0.1:9190)",
    )
    a.add_argument("--key", required=True, help="the device key clients ask the tracker for, e.g. rasp4")
    a.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    a.add_argument("--port", type=_port, metavar="N", help="port to listen on (default: the first free from 9090)")
    a.add_argument("--threads", type=int, metavar="N", help="runtime threads for kernels (default: all cores)")
    a.set_defaults(func=cmd_serve)

    a = actions.add_parser("add", help="add an RPC device to the store's device list")
    a.add_argument("name", metavar="NAME")
    a.add_argument("--tracker", required=True, metavar="HOST:PORT", help="its tracker, e.g. 10.0.0.5:9190")
    a.add_argument("--key", required=True, help="the key its servers registered with")
    a.add_argument(
        "--target",
        metavar="JSON",
        help='TVM target to compile for (default {"kind": "llvm"}), e.g. '
        '\'{"kind": "llvm", "mtriple": "aarch64-linux-gnu", '
        '"mcpu": "cortex-a72"}\' or \'{"kind": "cuda", "arch": "sm_80"}\'',
    )
    a.add_argument(
        "--session-timeout",
        type=float,
        default=Device.session_timeout,
        metavar="S",
        help=f"longest session (one measurement or tuning trial), s (default {Device.session_timeout:g})",
    )
    a.add_argument(
        "--wait",
        type=float,
        default=Device.wait,
        metavar="S",
        help=f"how long a job waits for a free server, s (default {Device.wait:g})",
    )
    a.add_argument("--replace", action="store_true", help="change a device that already exists")
    a.set_defaults(func=cmd_add)

    a = actions.add_parser("list", help="the devices, their default and their last health check")
    options.json_output(a)
    a.set_defaults(func=cmd_list)

    a = actions.add_parser("check", help="health check: tracker, free/busy servers, a tiny kernel's round trip")
    a.add_argument("name", metavar="NAME")
    a.add_argument("--timeout", type=float, default=30.0, metavar="S", help="give up after S seconds (default 30)")
    options.json_output(a, "print the check as JSON")
    a.set_defaults(func=cmd_check)

    a = actions.add_parser("remove", help="remove a device (its measurements keep its name)")
    a.add_argument("name", metavar="NAME")
    a.set_defaults(func=cmd_remove)

    a = actions.add_parser("default", help="show the default device, or make NAME the default")
    a.add_argument("name", metavar="NAME", nargs="?")
    a.set_defaults(func=cmd_default)

    for name in ("add", "list", "check", "remove", "default"):
        options.store(actions.choices[name])


def cmd_tracker(args) -> int:
    _note_exposure(args.host)
    _serve_in_child("tracker_call", {"host": args.host, "port": args.port})
    return 0


def cmd_serve(args) -> int:
    from core.compile.target import core_count  # TVM

    _note_exposure(args.host)
    threads = args.threads or core_count()
    kwargs = {"tracker": args.tracker, "key": args.key, "host": args.host, "port": args.port, "threads": threads}
    _serve_in_child("server_call", kwargs)
    return 0


def _serve_in_child(function: str, kwargs: dict) -> None:
    """Serve from a child process whose whole group (TVM's listener too) ends with this command,
    even when it is killed; Ctrl-C here stops it."""
    try:
        call_in_subprocess(f"core.devices.serving:{function}", kwargs, on_progress=lambda _, line: _announce(line))
    except KeyboardInterrupt:
        _announce("stopped")


def cmd_add(args) -> int:
    with Store(args.store) as store:
        device = add_device(
            store,
            args.name,
            args.tracker,
            args.key,
            args.target,
            session_timeout=args.session_timeout,
            wait=args.wait,
            replace=args.replace,
        )
    print(
        f"{'changed' if args.replace else 'added'} device {device.name}: {device.describe()}; "
        f"check it with `tessera device check {device.name}`"
    )
    return 0


def cmd_list(args) -> int:
    with Store(args.store) as store:
        devices = list_devices(store)
    if args.json:
        print(
            json.dumps([{**d.to_dict(), "default": d.default, "last_check": d.last_check} for d in devices], indent=2)
        )
        return 0
    rows = [("name", "default", "kind", "tracker", "key", "target", "last check")]
    for d in devices:
        rows.append(
            (
                d.name,
                "*" if d.default else "",
                d.kind,
                d.tracker or "-",
                d.key or "-",
                json.dumps(d.target, sort_keys=True) if d.target else "this CPU",
                _check_text(d.last_check),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


def cmd_check(args) -> int:
    with Store(args.store) as store:
        device = get_device(store, args.name)
        answer = call_in_subprocess(
            "core.compile.health:check_call",
            {"config": device.to_dict(), "timeout": args.timeout},
            timeout=args.timeout + CHECK_SPAWN_GRACE,
        )
        record_check(store, device.name, answer)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print(f"{device.name} ({device.describe()}): {_check_text(answer)}")
    return 0 if answer["error"] is None else 1


def cmd_remove(args) -> int:
    with Store(args.store) as store:
        remove_device(store, args.name)
        now = default_device(store).name
    print(f"removed device {args.name}; measurements made on it keep its name. Default device: {now}")
    return 0


def cmd_default(args) -> int:
    with Store(args.store) as store:
        device = set_default(store, args.name) if args.name else default_device(store)
    print(f"default device: {device.name} ({device.describe()})")
    return 0


def _check_text(check: dict | None) -> str:
    """A health check in one line: 'ok: 2 free, 0 busy, 0 waiting; round trip 41 ms (12:03:44)'."""
    if not check:
        return "never checked"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(check["checked"]))
    counts = (
        f"{check['free']} free, {check['busy']} busy, {check['pending']} waiting"
        if check.get("free") is not None
        else ""
    )
    if check.get("error"):
        return f"failed: {check['error']}" + (f" ({counts})" if counts else "") + f" [{when}]"
    trip = f"round trip {check['round_trip_ms']:.0f} ms" if check.get("round_trip_ms") is not None else ""
    return "ok" + (": " if counts or trip else "") + "; ".join(filter(None, (counts, trip))) + f" [{when}]"


def _note_exposure(host: str) -> None:
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        print(f"note: listening on {host}, so other machines can connect and run code here", file=sys.stderr)


def _announce(line: str) -> None:
    print(line, flush=True)
