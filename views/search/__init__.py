"""The Search page: a strategy's settings, the run's progress, and the discovery loop's
status (stage counts, baseline and best), the loop running in a thread of its own."""
