"""The window: its pages and menus (window.py, pages.py, panels.py), the Explore and accuracy
actions that connect the views to the job queue, the window's settings, and `run`
(main.py), which `tessera gui` calls. Nothing here is imported by the command line's
other commands."""
