"""Starting the window (on views.theme's application), and the screenshot mode that
`tessera gui --screenshot` uses for tests, the docs' pictures and reviewers."""

from __future__ import annotations

import time
from pathlib import Path

import shiboken6
from PySide6.QtWidgets import QApplication

from core.errors import TesseraError
from views.theme import application

IDLE_TIMEOUT_S = 120.0
SCREENSHOT_SIZE = (1600, 1000)


class DisplayError(TesseraError):
    """This desktop lacks what the window needs (app.gui.display says what, and how to install it)."""


class ScreenshotError(TesseraError):
    """The window could not be captured or the picture could not be written."""


def run(
    file: str | None = None,
    store: str | None = None,
    screenshot: str | None = None,
    view: str | None = None,
    size: tuple[int, int] = SCREENSHOT_SIZE,
) -> int:
    """`view`: the page to show (app.gui.pages), else the start page or the file's own editor;
    `size`: the window's, in a screenshot (the README's pictures are 1280x720)."""
    from app.gui.display import problem
    from app.gui.settings import open_settings, theme_choice

    why = None if screenshot else problem()
    if why is not None:  # said here, and `tessera demo` offered, instead of Qt's abort
        raise DisplayError(f"{why}\n`tessera demo` runs the tour without a window.")
    settings = None if screenshot else open_settings()
    app = application(theme_choice(settings))
    from app.gui.window import MainWindow

    window = MainWindow(settings=settings, store=store, run_jobs=not screenshot)  # a picture only looks
    try:
        if screenshot:
            if file:
                window.load(file)  # a bad file raises TesseraError: the CLI prints it and exits 1
            if view:
                window.show_page(view)
            return _screenshot(app, window, Path(screenshot), size)
        window.show()
        if file:
            window.open_file(file)
        if view:
            window.show_page(view)
        return app.exec()
    finally:
        if shiboken6.isValid(window):  # closed, it may be gone already (and shut down)
            window.shutdown()


def wait_until_idle(app: QApplication, window, timeout: float = IDLE_TIMEOUT_S) -> None:
    """Process events until the window has no background work left (or `timeout` passes)."""
    deadline = time.monotonic() + timeout
    app.processEvents()
    while not window.is_idle() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    app.processEvents()


def _screenshot(app: QApplication, window, out: Path, size: tuple[int, int] = SCREENSHOT_SIZE) -> int:
    window.resize(*size)
    window.show()
    wait_until_idle(app, window)
    if window.explore.failure is not None:  # its error, not a picture of a window without its store
        raise window.explore.failure
    window.view.fit_all(readable=True)
    app.processEvents()
    wait_until_idle(app, window)
    picture = window.grab()
    out.parent.mkdir(parents=True, exist_ok=True)
    saved = picture.save(str(out))
    window.hide()  # not closed: closing asks about queued jobs and saves the layout, neither wanted here
    app.processEvents()
    if not saved:
        raise ScreenshotError(f"cannot write the screenshot to {out} (unknown image format or unwritable folder)")
    print(f"saved {out} ({picture.width()}x{picture.height()})")
    return 0
