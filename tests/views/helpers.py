"""Real Qt input events for GUI tests: mouse drags on a view's viewport and
drag-and-drop deliveries, sent through QApplication like a windowing system would."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QWidget

LEFT = Qt.MouseButton.LeftButton
NO_BUTTON = Qt.MouseButton.NoButton


def mouse(
    widget: QWidget, kind: QEvent.Type, pos: QPoint, button=LEFT, buttons=LEFT, modifiers=Qt.KeyboardModifier.NoModifier
) -> None:
    local = QPointF(pos)
    event = QMouseEvent(kind, local, QPointF(widget.mapToGlobal(pos)), button, buttons, modifiers)
    QApplication.sendEvent(widget, event)


def drag_mouse(widget: QWidget, start: QPoint, end: QPoint, steps: int = 6, button=LEFT) -> None:
    """Press at `start`, move in `steps` to `end` with the button held, release at `end`."""
    mouse(widget, QEvent.Type.MouseButtonPress, start, button, button)
    for i in range(1, steps + 1):
        p = start + (end - start) * (i / steps)
        mouse(widget, QEvent.Type.MouseMove, QPoint(round(p.x()), round(p.y())), NO_BUTTON, button)
    mouse(widget, QEvent.Type.MouseButtonRelease, end, button, NO_BUTTON)


def press_and_hover(widget: QWidget, start: QPoint, end: QPoint, steps: int = 6) -> None:
    """Press at `start` and move to `end` without releasing (to look at feedback mid-drag)."""
    mouse(widget, QEvent.Type.MouseButtonPress, start)
    for i in range(1, steps + 1):
        p = start + (end - start) * (i / steps)
        mouse(widget, QEvent.Type.MouseMove, QPoint(round(p.x()), round(p.y())), NO_BUTTON, LEFT)


def release(widget: QWidget, pos: QPoint) -> None:
    mouse(widget, QEvent.Type.MouseButtonRelease, pos, LEFT, NO_BUTTON)


def deliver_drop(target: QWidget, mime, pos: QPoint) -> bool:
    """What a drag over `target` ending at `pos` delivers: DragEnter, DragMove, Drop. True if accepted."""
    action, buttons, mods = Qt.DropAction.CopyAction, LEFT, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(pos, action, mime, buttons, mods)
    QApplication.sendEvent(target, enter)
    if not enter.isAccepted():
        return False
    move = QDragMoveEvent(pos, action, mime, buttons, mods)
    QApplication.sendEvent(target, move)
    drop = QDropEvent(QPointF(pos), action, mime, buttons, mods)
    QApplication.sendEvent(target, drop)
    return drop.isAccepted()


def card_header(item) -> QPointF:
    """A point on a node card's header band (scene coordinates): clicking it grabs the card."""
    rect = item.card_rect()
    return item.scenePos() + QPointF(0, rect.top() + 8)


def type_bindings(qtbot, bar, text: str) -> None:
    """Select the bar's text, type over it and press Enter, as a user does."""
    bar.edit.setFocus()
    bar.edit.selectAll()
    qtbot.keyClicks(bar.edit, text)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)


def click_entry(list_widget, text: str) -> None:
    """Click the entry of a list (e.g. on the start page) whose text begins with `text`."""
    item = next(list_widget.item(i) for i in range(list_widget.count()) if list_widget.item(i).text().startswith(text))
    list_widget.scrollToItem(item)
    rect = list_widget.visualItemRect(item)
    drag_mouse(list_widget.viewport(), rect.center(), rect.center(), steps=1)


def move(qtbot, viewport: QWidget, pos: QPoint) -> None:
    """The mouse moves to `pos` at a human pace (pyqtgraph drops moves faster than its rate limit)."""
    qtbot.wait(40)
    mouse(viewport, QEvent.Type.MouseMove, pos, NO_BUTTON, NO_BUTTON)


def open_explorer(qtbot, store_path, settings, size: tuple[int, int]):
    """A shown main window of `size` over `store_path`, switched to the Explorer, workers off."""
    from app.gui.window import MainWindow

    window = MainWindow(settings=settings, store=str(store_path))
    window.explore.actions["autostart"].setChecked(False)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("explorer")
    qtbot.waitUntil(window.is_idle, timeout=20_000)
    return window
