"""Entry point of the packaged (PyInstaller) application: `tessera` with the CLI's arguments.

A frozen program has no Python interpreter to spawn, so `sys.executable` is this
program: multiprocessing's spawned workers come back here (freeze_support handles
them) and so do TVM's pool workers, started as `sys.executable -m tvm.exec.popen_worker`
(handled here like `python -m`)."""

import multiprocessing
import runpy
import sys


def main() -> int:
    multiprocessing.freeze_support()
    if len(sys.argv) > 2 and sys.argv[1] == "-m":
        module = sys.argv[2]
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    from app.cli import main as cli

    return cli()


if __name__ == "__main__":
    sys.exit(main())
