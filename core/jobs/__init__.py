"""Jobs: a queue persisted in the results store (queue.py), spawned worker processes
that run job handlers (worker.py, context.py), a supervisor that watches them
(supervisor.py), and a one-shot isolation helper (isolate.py).

Import from the submodules: this package imports nothing itself, so a process
that only needs isolate.call_in_subprocess (or its child) stays light.
"""
