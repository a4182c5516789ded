"""Accuracy-side evaluation of an operator inside a backbone: Fisher Potential screening,
proxy training with Canvas's early stop, end-to-end latency, and the job handlers that run
them in worker processes (torch and TVM are imported only there)."""
