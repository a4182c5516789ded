"""The Explorer page's widgets and the dialogs it opens: the live Pareto plot, the paged
results browser and result panel, tuning convergence, side-by-side comparison, the job and
accuracy monitors, and the Evaluate/Tune, accuracy, device and runner dialogs. The window
opens them and turns their requests into jobs in app.gui.explore and app.gui.accuracy.

Every view here reads the results store through one ExplorerSession (session.py):
heavy reads run in a reader thread with its own SQLite connection, jobs run in worker
processes started by a core.jobs Supervisor, so the GUI thread only draws."""
