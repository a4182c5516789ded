"""Jobs: a queue persisted in the results store, spawned worker processes that run
job handlers, a supervisor that watches them, and a one-shot isolation helper."""
