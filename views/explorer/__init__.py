"""The Explore side of the window: Evaluate/Tune requests, the job monitor, the live
Pareto plot, the paged results browser, tuning convergence and side-by-side comparison.

Every view here reads the results store through one ExplorerSession (session.py):
heavy reads run in a reader thread with its own SQLite connection, jobs run in worker
processes started by a core.jobs Supervisor, so the GUI thread only draws."""
