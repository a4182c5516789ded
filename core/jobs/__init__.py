"""Jobs: a queue persisted in the results store (queue.py), handlers run with a context
(context.py, outcomes.py), runner processes a supervisor starts and watches (supervisor.py)
for each executor (executors.py): local worker processes (worker.py), or one process
sending jobs to a Ray cluster as tasks (ray_runner.py, ray_task.py); and a one-shot
isolation helper (isolate.py).

Import from the submodules: this package imports nothing itself, so a process that only
needs isolate.call_in_subprocess (or its child) stays light. Only ray_runner and ray_task
import Ray, and only a Ray runner process (and Ray's workers) imports them.
"""
