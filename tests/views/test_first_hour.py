"""A newcomer's first hour in the window, driven with the mouse and keyboard: the start page,
readable examples, one-click choices for a dynamic variable, palette search by what a
primitive does, Evaluate/Tune that say why they are not available, sequence files from
File > Open, shortcuts, and a layout that fits the screen and survives a broken save."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetricsF, QGuiApplication
from PySide6.QtWidgets import QApplication

from core.store import Store
from tests.support import EXAMPLES
from views import theme
from views.editor.canvas import READABLE_ZOOM
from views.editor.canvas_items import PORT_HIT_PX

from .helpers import click_entry, drag_mouse

pytestmark = pytest.mark.gui
SEQUENCES = EXAMPLES / "sequences"


def on_screen_width(view, item, rect) -> float:
    return view.mapFromScene(item.mapToScene(rect)).boundingRect().width()


def test_the_window_opens_on_a_start_page_and_every_way_in_takes_one_click(window):
    assert window.on_start_page() and window.docks["palette"].isHidden()  # nothing about an empty document
    assert not window.explore.actions["evaluate"].isEnabled()
    click_entry(window.start_page.examples, "involution")
    assert not window.on_start_page() and window.document.graph.name == "involution"
    assert not window.docks["palette"].isHidden() and window.document.summary.ok
    window.commands["start"].trigger()  # View > Start Page: the file just opened is listed as recent
    assert window.on_start_page() and window.start_page.recent.item(0).text().startswith("involution.json")
    click_entry(window.start_page.templates, "KxK convolution")
    assert window.windowTitle().startswith("Untitled") and window.document.summary.ok
    assert window.explore.actions["evaluate"].isEnabled() and window.diagnostics.messages()[0][0] == "ok"
    window.commands["start"].trigger()
    click_entry(window.start_page.recent, "involution.json")
    assert window.document.graph.name == "involution"


def test_new_starts_from_an_operator_that_validates(qtbot, window):
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert not window.on_start_page() and window.document.graph.primitive_nodes() == ["pointwise"]
    assert [m[0] for m in window.diagnostics.messages()] == ["ok"] and not window.isWindowModified()


@pytest.mark.parametrize("name", ["involution", "syno_operator1", "gated_separable"])
def test_examples_open_readable_and_ports_are_easy_to_hit_at_any_zoom(window, name):
    window.open_file(EXAMPLES / f"{name}.json")
    view = window.view
    zoom = view.transform().m11()
    assert zoom >= READABLE_ZOOM
    smallest_text = QFontMetricsF(theme.ui_font(7.5)).height() * zoom
    assert smallest_text >= 8, f"card text {smallest_text:.1f} px high"
    input_card = window.scene.node_item("input")
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(input_card.sceneBoundingRect())
    for factor in (0.05, 100.0):  # zoomed all the way out, then all the way in
        view.zoom(factor)
        for node in window.document.graph.g:
            for port in window.scene.node_item(node).ports():
                assert on_screen_width(view, port, port.boundingRect()) >= PORT_HIT_PX - 0.5


def test_a_dynamic_variable_is_chosen_with_one_click(qtbot, window):
    click_entry(window.start_page.templates, "Empty operator")
    node = window.scene.add_primitive("fc", QPointF(250, 0))
    for src, dst in (("input", node), (node, "output")):
        start = window.view.mapFromScene(window.scene.node_item(src).output.scenePos())
        end = window.view.mapFromScene(window.scene.node_item(dst).inputs[0].scenePos())
        drag_mouse(window.view.viewport(), start, end)
    assert window.document.graph.prim(node).params["out"] == "x1"
    rows = window.diagnostics.messages()
    assert [r[0] for r in rows] == ["pending"] and "choose x1" in rows[0][2]
    assert not any("--bind" in r[2] for r in rows)  # the window's words, not the command line's
    tune = window.explore.actions["tune"]
    assert not tune.isEnabled() and tune.toolTip() == "Not yet: choose a value for x1 in Diagnostics"
    (button,) = window.diagnostics.choices()["x1"]
    assert button.text() == "x1 = C_out" and button.isVisible()
    QApplication.processEvents()  # the table places its buttons when it lays out
    assert button.height() >= button.sizeHint().height()  # drawn whole in its row, the underscore too
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.document.graph.prim(node).params["out"] == "C_out"
    assert [r[0] for r in window.diagnostics.messages()] == ["ok"] and tune.isEnabled()
    window.commands["undo"].trigger()
    assert window.document.graph.prim(node).params["out"] == "x1"


def test_unbound_sizes_are_asked_for_in_the_bindings_bar(qtbot, window):
    window.open_file(EXAMPLES / "conv2d.json")
    window.document.set_bindings({"C_in": 8, "C_out": 8})
    (row,) = window.diagnostics.messages()
    assert row[2] == "bindings: no value for H, K, W: type H=…, K=…, W=… in the Bindings bar"
    assert window.explore.actions["evaluate"].toolTip() == "Not yet: give H, K, W a value in the Bindings bar"


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("conv", {"fc", "share", "unfold", "reduce"}),
        ("pool", {"fold", "stride"}),
        ("attention", {"softmax", "broadcast"}),
    ],
)
def test_palette_search_finds_primitives_by_what_they_do(qtbot, window, typed, found):
    palette = window.primitive_palette
    window.new_document()
    qtbot.keyClicks(palette.search, typed)
    assert set(palette.visible_ops()) == found


def test_a_primitive_of_two_families_is_found_once_and_says_which(qtbot, window):
    palette = window.primitive_palette
    window.new_document()
    qtbot.keyClicks(palette.search, "shift")
    shown = [leaf.text(0) for leaf in palette._leaves() if not leaf.isHidden()]
    assert shown == ["Shift (Canvas, Syno)"]
    palette.search.clear()
    assert [leaf.text(0) for leaf in palette.items_for("shift")] == ["Shift", "Shift"]


def test_file_open_reads_a_sequence_into_the_sequence_editor(window, dialogs):
    assert window.open_file(SEQUENCES / "seq_spatial_grouping.json")
    assert dialogs.calls == [] and window.pages.current == "sequences" and window.sequences.isVisible()
    assert window.sequences.sequence.name == "seq_spatial_grouping"
    window.commands["start"].trigger()  # the bundled sequences are on the start page too
    click_entry(window.start_page.examples, "seq_unroll_group")
    assert window.sequences.sequence.name == "seq_unroll_group" and window.pages.current == "sequences"


def test_redo_and_quit_answer_every_platform_binding(qtbot, window):
    window.new_document()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.document.editor.move({"pointwise": (300.0, 0.0)})
    for redo in ("Ctrl+Y", "Ctrl+Shift+Z"):
        window.commands["undo"].trigger()
        assert window.document.graph.pos("pointwise") != (300.0, 0.0)
        key = Qt.Key.Key_Y if redo == "Ctrl+Y" else Qt.Key.Key_Z
        modifiers = Qt.KeyboardModifier.ControlModifier
        if redo == "Ctrl+Shift+Z":
            modifiers |= Qt.KeyboardModifier.ShiftModifier
        qtbot.keyClick(window.view, key, modifiers)
        assert window.document.graph.pos("pointwise") == (300.0, 0.0), redo
    assert "Ctrl+Q" in [k.toString() for k in window.commands["quit"].shortcuts()]


def test_the_first_window_fits_the_screen_and_docks_keep_a_useful_width(make_window):
    from app.gui.window import MainWindow

    available = QGuiApplication.primaryScreen().availableGeometry()
    fresh = MainWindow(settings=None)
    try:
        assert fresh.width() <= available.width() and fresh.height() <= available.height()
    finally:
        fresh.close()
    window = make_window()
    window.new_document()
    window.resize(1000, 700)  # a small window: the docks keep their minimum, the canvas gives way
    QApplication.processEvents()
    assert window.docks["palette"].width() >= 190 and window.docks["inspector"].width() >= 240


def test_a_broken_saved_layout_gives_way_to_the_default(make_window, settings_path):
    from app.gui.settings import open_settings

    settings = open_settings(settings_path)
    settings.setValue("window/state", b"\x00\x01 not a layout")
    settings.sync()
    window = make_window()
    window.new_document()
    assert not window.docks["palette"].isHidden() and not window.docks["inspector"].isHidden()
    assert open_settings(settings_path).value("window/state") is None


def test_a_result_opened_from_the_explorer_is_titled_by_its_operator(qtbot, explorer, store_path, examples_dir):
    from core.ir.serialize import read_document

    with Store(store_path) as store:
        operator = store.add_operator(read_document(examples_dir / "grouped_conv.json"), "grouped_conv")
        device = store.add_device("local", "local")
        result = store.add_measurement(operator, device, {"latency_ms": 1.0, "bindings": {"C_in": 8}})
    table = explorer.explore.view.browser.table
    qtbot.waitUntil(lambda: table.model().rowCount() == 1 and explorer.is_idle(), timeout=20_000)
    assert table.model().id_at(0) == result
    cell = table.visualRect(table.model().index(0, 1)).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)  # a double-click's first press
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert explorer.pages.current == "editor" and explorer.windowTitle().startswith("grouped_conv")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_card_lines_of_the_examples_fit_their_cards(window, path):
    from views.editor.canvas_items import NODE_WIDTH, PADDING, card_font

    window.open_file(path)
    for node in window.document.graph.g:
        for kind, text in window.scene.node_item(node).lines():
            advance = QFontMetricsF(card_font(kind)).horizontalAdvance(text)
            assert advance <= NODE_WIDTH - 2 * PADDING, f"{node} {kind}: {text!r} is cut off"
            assert not text.endswith("·"), f"{node} {kind}: {text!r} breaks after a separator left dangling"


def test_the_bindings_of_every_example_show_whole_in_a_laptop_window(window):
    window.resize(1256, 706)  # the window on a 1366x768 screen
    for path in sorted(EXAMPLES.glob("*.json")):
        window.open_file(path)
        QApplication.processEvents()
        edit = window.bindings_bar.edit
        edit.setCursorPosition(len(edit.text()))  # where typing goes on: the text's start must still show
        assert edit.cursorRect().center().x() - edit.fontMetrics().horizontalAdvance(edit.text()) >= 0, path.name


SHORT_KERNEL = {  # what `tessera measure` records for a kernel too short to time (see core.compile.measure)
    "latency_ms": 0.0011,
    "latency_std_ms": 0.0002,
    "flops": 18432,
    "torch_latency_ms": 1.66,
    "trial_count": 4,
    "schedule_source": "untuned (the tuned schedule ran slower: 0.005106 ms)",
    "max_abs_error": 0.0,
    "timing_note": "unreliable: TVM's kernel is too short to time reliably (1.1 us per call)",
    "bindings": {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3},
}


def test_a_timing_in_doubt_is_marked_wherever_it_shows_with_the_correctness_check(
    qtbot, store_path, explorer, examples_dir
):
    from core.ir.serialize import read_document
    from views.result_columns import COLUMNS

    from .helpers import move

    with Store(store_path) as store:
        operator = store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d")
        doubtful = store.add_measurement(operator, None, SHORT_KERNEL)
        trusted = {key: value for key, value in SHORT_KERNEL.items() if key != "timing_note"}
        sound = store.add_measurement(operator, None, {**trusted, "latency_ms": 0.2})
    view = explorer.explore.view
    model, table = view.browser.model, view.browser.table
    qtbot.waitUntil(lambda: model.rowCount() == 2 and explorer.is_idle(), timeout=20_000)
    speedup = [c.key for c in COLUMNS].index("speedup")
    rows = {model.id_at(r): r for r in range(2)}
    assert model.index(rows[doubtful], speedup).data().endswith("× ⚠")
    assert "too short to time" in model.index(rows[doubtful], speedup).data(Qt.ItemDataRole.ToolTipRole)
    assert not model.index(rows[sound], speedup).data().endswith("⚠")

    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(model.index(rows[doubtful], 1)).center()
    )
    panel = view.panel
    assert panel.result_id == doubtful
    assert panel.values["speedup"].text().endswith("⚠") and panel.values["max_abs_error"].text() == "0"
    assert panel.values["schedule_source"].text().startswith("untuned (the tuned schedule ran slower")
    assert panel.doubt.isVisible() and "too short to time reliably" in panel.doubt.text()
    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(model.index(rows[sound], 1)).center()
    )
    assert not panel.doubt.isVisible() and not panel.values["speedup"].text().endswith("⚠")

    plot = view.plot
    move(qtbot, plot.plot.viewport(), plot.plot.mapFromScene(plot.scene_position(doubtful)))
    assert plot.card.result_id == doubtful and "too short to time reliably" in plot.card.html(doubtful)


def test_the_job_monitor_shows_progress_moving_with_the_time_left(qtbot, store_path, explorer):
    from core.jobs.queue import JobQueue
    from core.jobs.supervisor import Supervisor
    from tests.core.job_kinds import TEST_HANDLERS
    from views.explorer.job_monitor import HEADERS

    with Store(store_path) as store:
        JobQueue(store).submit("sleep", {"seconds": 8, "steps": 80})  # a job that reports each step
    session = explorer.explore.session
    session.supervisor = Supervisor(store_path, workers=1, handlers=TEST_HANDLERS)
    session.supervisor.start()
    explorer.explore.actions["jobs"].trigger()
    model = explorer.explore.monitor.model

    def cell(header: str) -> str:
        return model.data(model.index(0, HEADERS.index(header))) if model.rowCount() else ""

    qtbot.waitUntil(lambda: cell("Elapsed").endswith(" left"), timeout=30_000)  # '0:02, ~0:06 left'
    first = int(cell("Progress").rstrip("%"))
    assert 0 < first < 100 and cell("Message").startswith("step ")
    qtbot.waitUntil(lambda: int(cell("Progress").rstrip("%")) > first, timeout=10_000)


def test_the_job_runners_address_shows_its_whole_placeholder(qtbot, window):
    from PySide6.QtWidgets import QStyle, QStyleOptionFrame

    window.explore.actions["runner"].trigger()  # Run > Job Runner…
    dialog = window.explore.dialog
    qtbot.waitExposed(dialog)
    address = dialog.address
    option = QStyleOptionFrame()
    address.initStyleOption(option)
    room = address.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, address).width()
    assert room - 4 >= address.fontMetrics().horizontalAdvance(address.placeholderText())  # 2 px margins
    dialog.reject()


def test_a_result_a_sequence_search_found_opens_its_sequence_in_the_sequence_editor(qtbot, explorer, store_path):
    from core.analysis.legality import check_sequence
    from core.codegen.loopnest_ir import result_operator
    from core.ir.sequence import load_sequence, sequence_document
    from core.ir.serialize import read_document

    seq = load_sequence(EXAMPLES / "sequences" / "seq_split_group.json")
    with Store(store_path) as store:
        found = store.add_operator(
            result_operator(check_sequence(seq).final, "split-group").graph,
            "split-group",
            "search:sequences",
            sequence_document(seq),
        )
        drawn = store.add_operator(read_document(EXAMPLES / "grouped_conv.json"), "grouped_conv")
    browser = explorer.explore.view.browser
    table = browser.table
    qtbot.waitUntil(lambda: table.model().rowCount() == 2 and explorer.is_idle(), timeout=20_000)
    action = browser.named_actions["sequence"]
    assert action in table.actions()  # in the table's context menu

    def click_row(operator_id):
        row = next(r for r in range(2) if table.model().id_at(r) == -operator_id)  # unmeasured: 'o<id>' rows
        qtbot.mouseClick(
            table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(table.model().index(row, 1)).center()
        )

    click_row(drawn)
    assert not action.isEnabled() and "Only operators a sequence search found" in action.toolTip()
    click_row(found)
    assert action.isEnabled()
    action.trigger()
    assert explorer.pages.current == "sequences"
    assert explorer.sequences.sequence.steps == seq.steps and explorer.sequences.path is None
    assert explorer.statusBar().currentMessage() == "Opened the sequence that found split-group (4 steps)"
