"""The window, offscreen: add a folder, watch it index, search, click through, no answer,
failed documents and retry, and a GUI thread that never blocks while indexing."""

import threading
import time
from pathlib import Path

import pytest
from conftest import make_library, make_pdf

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt, QTimer  # noqa: E402

from kbapp.gui.documents import FOLDER, NAME, REASON, STATE  # noqa: E402
from kbapp.gui.main_window import MainWindow  # noqa: E402


@pytest.fixture(autouse=True)
def own_settings(tmp_path, monkeypatch):
    """Each test's QSettings (geometry, notices) in its own folder: Qt reads HOME once per
    process, so the path is set for every test."""
    from PySide6.QtCore import QSettings

    monkeypatch.setenv("HOME", str(tmp_path))
    for fmt in (QSettings.NativeFormat, QSettings.IniFormat):
        QSettings.setPath(fmt, QSettings.UserScope, str(tmp_path / "qsettings"))


@pytest.fixture
def window(qtbot, tmp_path, real_encoder):
    lib = make_library(tmp_path / "lib", real_encoder)
    w = MainWindow(lib)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.ready, timeout=60000)
    yield w
    w.close()  # cancels indexing and ends the engine thread: nothing outlives its test
    lib.close()


def make_docs(root):
    root.mkdir()
    make_pdf(root / "boat.pdf", [
        "Chapter one covers sails and ropes for small boats.",
        "The keel must be inspected for cracks every spring before launch.",
    ])  # fmt: skip
    (root / "garden.md").write_text("# Garden\n\nTomatoes need six hours of sun every day.\n")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4 broken beyond repair")
    return root


def index_docs(qtbot, w, tmp_path):
    """Add the sample folder through the window and wait until it is indexed."""
    docs = make_docs(tmp_path / "docs")
    w.add_paths([str(docs)])
    wait_indexed(qtbot, w)
    return docs


def type_search(qtbot, w, query, until=None):
    w.query.setText(query)
    qtbot.keyClick(w.query, Qt.Key_Return)
    qtbot.waitUntil(until or (lambda: w.results.count() > 0), timeout=30000)


def wait_indexed(qtbot, w):
    def settled():  # read from the window's own table: the test stays off the library too
        if w.index_thread is not None or w.pending_index or w.new_paths:
            return False
        shown = w.documents_shown
        w.refresh_documents()  # the table refreshes on the engine thread: wait for it
        qtbot.waitUntil(lambda: w.documents_shown > shown, timeout=10000)
        m = w.doc_model
        return not {m.cell(r, STATE) for r in range(m.rowCount())} & {"queued", "indexing"}

    qtbot.waitUntil(settled, timeout=120000)


def test_empty_state_explains_what_to_do(window):
    assert "Drop a folder here" in window.answer.text()
    assert "Nothing leaves this machine" in window.answer.text()
    assert window.query.hasFocus() or window.focusWidget() is window.query


def test_add_folder_search_and_click_through_to_the_highlighted_page(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    m = w.doc_model
    states = {m.cell(r, NAME): m.cell(r, STATE) for r in range(m.rowCount())}
    assert states == {"boat.pdf": "indexed", "garden.md": "indexed", "bad.pdf": "failed"}
    reason = next(m.cell(r, REASON) for r in range(m.rowCount()) if m.cell(r, NAME) == "bad.pdf")
    assert reason

    type_search(qtbot, w, "when should the keel be inspected")
    first = w.results.item(0)
    hit = first.data(Qt.UserRole)
    assert hit.name == "boat.pdf" and hit.page_from == 2
    w.open_result(first)
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
    assert "page 2" in w.viewer.page_label.text()
    assert w.viewer.highlighted, "the cited characters are highlighted on the page"
    # the highlight covers the cited passage's own characters: the text under it is the quote
    assert all(72 <= r[0] < r[2] <= 530 for r in w.viewer.highlighted)
    import pymupdf

    with pymupdf.open(hit.path) as doc:
        under = " ".join(doc[1].get_textbox(pymupdf.Rect(r)) for r in w.viewer.highlighted)
    assert " ".join(under.split()) == " ".join(hit.content.split())


def test_text_result_selects_the_exact_range(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(qtbot, w, "how much sun do tomatoes need")
    hit = w.results.item(0).data(Qt.UserRole)
    w.open_result(w.results.item(0))
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
    assert w.viewer.page_label.text() == ""  # nothing left over from a PDF
    selections = w.viewer.text.extraSelections()
    cursor = selections[0].cursor
    a, b = cursor.selectionStart(), cursor.selectionEnd()
    assert (
        w.viewer.text.toPlainText()[a:b]
        == hit.content
        == "Tomatoes need six hours of sun every day."
    )


def test_nonsense_query_shows_no_answer(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(
        qtbot, w, "how do i renew my spanish passport", until=lambda: "No answer" in w.answer.text()
    )
    assert w.results.count() == 0 and "is below" in w.answer.text()


def test_retry_after_the_file_is_fixed(qtbot, window, tmp_path):
    w = window
    docs = index_docs(qtbot, w, tmp_path)
    make_pdf(docs / "bad.pdf", ["Now a fine document about lanterns."])
    w.retry_failed()
    wait_indexed(qtbot, w)
    m = w.doc_model
    assert "failed" not in {m.cell(r, STATE) for r in range(m.rowCount())}


def test_new_file_in_a_watched_folder_is_picked_up(qtbot, window, tmp_path):
    w = window
    docs = index_docs(qtbot, w, tmp_path)
    w.rescan.stop()  # the folder watcher alone must hear it, not the periodic rescan
    (docs / "later.md").write_text("Owls hunt at night.\n")
    qtbot.waitUntil(lambda: any(d.name == "later.md" and d.state == "indexed"
                                for d in w.lib.status().documents), timeout=60000)  # fmt: skip


def test_a_file_edited_in_place_is_read_again(qtbot, window, tmp_path):
    """An edit that keeps the file (an editor saving over it) is heard as it happens, not
    at the next periodic scan."""
    w = window
    docs = index_docs(qtbot, w, tmp_path)
    qtbot.waitUntil(lambda: str(docs) in w.watcher.directories(), timeout=10000)
    w.rescan.stop()
    target = next(p for p in sorted(docs.iterdir()) if p.suffix in (".md", ".txt"))
    with open(target, "a", encoding="utf-8") as fh:  # the same file, written in place
        fh.write("\n\nThe quartermaster counts forty-two barrels of zwieback.\n")

    def found() -> bool:
        return any("zwieback" in h.content for h in w.lib.search("zwieback barrels", mode="bm25").hits)

    qtbot.waitUntil(found, timeout=60000)


class GuiThreadWatch:
    """Records every SQL statement run and every library lock taken on the GUI thread: the
    window stays responsive only while the GUI thread never waits for the library (a lock the
    indexer holds, a statement behind its write transaction, the model or the vector cache).
    Checked by what runs where, not by a wall clock."""

    def __init__(self, lib):
        self.seen: list[str] = []
        lib.store.conn.set_trace_callback(self._statement)
        for owner, attr, name in ((lib.storage.writer_lock, "lock", "writer"), (lib.cache, "lock", "cache"),
                                  (lib, "_elock", "model")):  # fmt: skip
            setattr(owner, attr, self._Watched(getattr(owner, attr), name, self))

    def _on_gui(self, what: str) -> None:
        if threading.current_thread() is threading.main_thread():
            self.seen.append(what)

    def _statement(self, sql: str) -> None:
        self._on_gui(sql.strip().split("\n")[0][:80])

    class _Watched:
        def __init__(self, lock, name, watch):
            self.lock, self.name, self.watch = lock, name, watch

        def acquire(self, *args, **kwargs):
            self.watch._on_gui(f"lock {self.name}")
            return self.lock.acquire(*args, **kwargs)

        def release(self):
            self.lock.release()

        def __enter__(self):
            self.acquire()
            return self

        def __exit__(self, *exc):
            self.release()


def test_gui_thread_is_never_blocked_while_indexing(qtbot, window, tmp_path):
    w = window
    docs = tmp_path / "many"
    docs.mkdir()
    for i in range(40):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\n" + f"Sentence {i} about topic. " * 60)
    watch = GuiThreadWatch(w.lib)
    beats = []
    timer = QTimer()
    timer.timeout.connect(lambda: beats.append(w.index_thread is not None))
    timer.start(20)
    w.add_paths([str(docs)])
    qtbot.waitUntil(lambda: w.index_thread is not None, timeout=5000)
    # the user types and searches while it indexes, and the table refreshes with progress
    before = w.answer.text()
    type_search(qtbot, w, "sentence about topic", until=lambda: w.answer.text() != before)
    wait_indexed(qtbot, w)
    timer.stop()
    assert any(beats), "the window's event loop kept turning while the index thread ran"
    assert w.doc_model.rowCount() == 40
    assert watch.seen == [], f"the GUI thread touched the library: {watch.seen[:5]}"


def test_settings_are_applied_and_remembered(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    w.search_opts = w.search_opts.with_overrides(min_dense=0.99, weak_dense=0.99)
    # a question asked in other words than the library's (its own words stand in a passage
    # would answer whatever the floor)
    type_search(qtbot, w, "what light do vegetable plants require",
                until=lambda: "No answer" in w.answer.text())  # fmt: skip
    w.save_search_settings()
    w.mode.setCurrentText("bm25")  # saved with the rest of the options, in the library
    qtbot.waitUntil(lambda: not w.engine.busy, timeout=10000)
    again = w.lib.search_defaults  # what `kbapp settings` and the next window read
    assert again.mode == "bm25" and again.min_dense == 0.99


def test_removing_a_folder_empties_its_documents(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    w.folder_list.setCurrentRow(0)
    w.remove_folder(confirm=False)
    shown = w.documents_shown
    qtbot.waitUntil(lambda: w.documents_shown > shown, timeout=10000)
    assert w.doc_model.rowCount() == 0 and w.folder_list.count() == 0


def test_keyboard_down_moves_into_results_and_escape_returns(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    w.query.setFocus()
    type_search(qtbot, w, "keel inspection")
    w.activateWindow()
    w.query.setFocus()
    qtbot.keyClick(w, Qt.Key_Down)
    assert w.results.hasFocus() or w.focusWidget() is w.results
    qtbot.keyClick(w.results, Qt.Key_Return)
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)  # Enter opened it
    qtbot.keyClick(w, Qt.Key_Escape)
    assert w.focusWidget() is w.query


def test_missing_tesseract_is_said_once(qtbot, tmp_path, real_encoder, monkeypatch):
    import kbapp.gui.main_window as mw

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(mw, "tesseract_available", lambda: False)
    shown = []
    for _ in range(2):
        lib = make_library(tmp_path / "lib", real_encoder)
        w = MainWindow(lib)
        qtbot.addWidget(w)
        qtbot.waitUntil(lambda w=w: w.ready, timeout=60000)
        shown.append(w.notice.isVisibleTo(w) and "needs OCR" in w.notice.text())
        w.close()  # the user quits; the next start is a new window on the same library
        lib.close()
    assert shown == [True, False]


def test_dropping_a_folder_adds_and_indexes_it(qtbot, window, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    w = window
    docs = make_docs(tmp_path / "dropped")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(docs))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    w.dropEvent(event)
    wait_indexed(qtbot, w)
    assert any(folder == str(docs) for folder, _ in w.lib.folders())
    assert w.lib.status().count("indexed") == 2


def test_copy_as_prompt_puts_numbered_sources_on_the_clipboard(qtbot, window, tmp_path):
    from PySide6.QtGui import QGuiApplication

    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(qtbot, w, "how much sun do tomatoes need")
    w.copy_as_prompt()
    text = QGuiApplication.clipboard().text()
    assert "Cite every claim as [n]" in text and "[1] garden.md" in text
    assert "Tomatoes need six hours of sun every day." in text


def test_edited_file_is_picked_up_by_the_periodic_rescan(qtbot, window, tmp_path):
    w = window
    docs = index_docs(qtbot, w, tmp_path)
    (docs / "garden.md").write_text("# Garden\n\nCucumbers climb trellises in summer.\n")
    w.rescan.setInterval(200)  # the real interval is a minute
    qtbot.waitUntil(
        lambda: any(
            "Cucumbers" in r[0] for r in w.lib.store.conn.execute("SELECT content FROM chunks")
        ),
        timeout=30000,
    )


def test_search_before_anything_is_indexed_says_why(qtbot, window):
    type_search(
        qtbot, window, "anything at all", until=lambda: "add a folder" in window.answer.text()
    )
    assert window.results.count() == 0


def test_uncaught_error_is_logged_and_shown_with_a_copyable_report(qtbot, caplog):
    from kbapp.gui.app import make_excepthook

    shown = []
    hook = make_excepthook("/tmp/kbapp.log", show=shown.append)
    try:
        raise ValueError("disk on fire")
    except ValueError as exc:
        hook(type(exc), exc, exc.__traceback__)
    box = shown[0]
    assert "/tmp/kbapp.log" in box.text()
    assert "ValueError: disk on fire" in box.detailedText() and "Traceback" in box.detailedText()
    assert "disk on fire" in caplog.text


def test_another_process_indexing_is_waited_for_and_then_searchable(qtbot, window, tmp_path):
    """The scenario of issue #9: a CLI process writes while the window is open."""
    import subprocess
    import sys

    w = window
    docs = index_docs(qtbot, w, tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "lighthouse.md").write_text("The lighthouse lamp is cleaned every Tuesday.")
    # another process takes the writer lock and holds it for a while
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time; fh = open(sys.argv[1], 'a+');"
        "fcntl.flock(fh, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(3)"
    ), str(w.lib.root / "writer.lock")], stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert holder.stdout.readline().strip() == "locked"
    beats = []
    timer = QTimer()
    timer.timeout.connect(lambda: beats.append(time.monotonic()))
    timer.start(20)
    w.add_paths([str(other)])  # returns at once: the indexing thread waits for the lock
    qtbot.waitUntil(lambda: holder.poll() is not None, timeout=20000)
    wait_indexed(qtbot, w)
    timer.stop()
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    assert gaps and max(gaps) < 1.0  # the GUI thread kept running while it waited
    assert "stopped" not in w.status_label.text()
    type_search(qtbot, w, "when is the lighthouse lamp cleaned")
    assert w.results.item(0).data(Qt.UserRole).name == "lighthouse.md"
    assert docs.exists()


def test_the_documents_table_follows_another_process(qtbot, window, tmp_path):
    """The CLI indexes a folder into the library the window has open: the window's table
    shows it within seconds, without a restart, and its searches find it."""
    import os
    import subprocess
    import sys

    w = window
    other = tmp_path / "other"
    other.mkdir()
    (other / "ferry.md").write_text("The night ferry leaves the north pier at 23:40.")
    subprocess.run([sys.executable, "-m", "kbapp", "--library", str(w.lib.root), "index",
                    str(other)], check=True, capture_output=True, timeout=300,
                   env=dict(os.environ, HF_HUB_OFFLINE="1"))  # fmt: skip
    m = w.doc_model
    qtbot.waitUntil(lambda: any(m.cell(r, NAME) == "ferry.md" and m.cell(r, STATE) == "indexed"
                                for r in range(m.rowCount())), timeout=15000)  # fmt: skip
    type_search(qtbot, w, "when does the night ferry leave")
    assert w.results.item(0).data(Qt.UserRole).name == "ferry.md"


def test_the_gui_thread_never_runs_engine_code(qtbot, window, tmp_path, monkeypatch):
    """Every Library entry point the window uses, recorded with the thread it ran on."""
    import threading

    from kbapp.library import Library

    on_gui = []
    for name in ("search", "status", "folders", "text", "pages", "page_boxes", "remove_folder",
                 "set_folder_paused", "index", "retry"):
        real = getattr(Library, name)

        def spy(*a, _real=real, _name=name, **k):
            if threading.current_thread() is threading.main_thread():
                on_gui.append(_name)
            return _real(*a, **k)

        monkeypatch.setattr(Library, name, spy)
    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(qtbot, w, "when should the keel be inspected")
    w.open_result(w.results.item(0))
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
    w.viewer._turn(-1)
    qtbot.waitUntil(lambda: w.viewer.current.page == 1, timeout=10000)
    type_search(qtbot, w, "tomatoes sun", until=lambda: w.results.count()
                and w.results.item(0).data(Qt.UserRole).name == "garden.md")  # fmt: skip
    w.open_result(w.results.item(0))
    qtbot.waitUntil(lambda: w.viewer.current is not None
                    and w.viewer.current.hit.name == "garden.md", timeout=10000)  # fmt: skip
    w.folder_list.setCurrentRow(0)
    w.toggle_pause()
    w.remove_folder(confirm=False)
    qtbot.waitUntil(lambda: w.folder_list.count() == 0, timeout=10000)
    assert on_gui == [], f"engine code ran on the GUI thread: {sorted(set(on_gui))}"


def test_a_query_typed_while_the_model_loads_runs_when_it_is_ready(qtbot, tmp_path,
                                                                   real_encoder, monkeypatch):  # fmt: skip
    monkeypatch.setenv("HOME", str(tmp_path))
    lib = make_library(tmp_path / "lib", real_encoder)
    lib.index([make_docs(tmp_path / "docs")])
    w = MainWindow(lib)
    qtbot.addWidget(w)
    w.query.setText("how much sun do tomatoes need")
    w.run_search()  # at once, before the warm-up has answered
    assert not w.ready
    qtbot.waitUntil(lambda: w.results.count() > 0, timeout=60000)
    assert w.results.item(0).data(Qt.UserRole).name == "garden.md"
    w.close()
    lib.close()


def test_empty_state_only_while_the_library_is_empty(qtbot, window, tmp_path):
    w = window
    qtbot.waitUntil(lambda: w.documents_shown > 0, timeout=10000)
    assert w.empty_add.isVisibleTo(w)  # a real button, not bold text
    index_docs(qtbot, w, tmp_path)
    assert "Drop a folder here" not in w.answer.text() and not w.empty_add.isVisibleTo(w)


def test_results_rewrap_when_the_pane_changes_width(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(qtbot, w, "keel inspection")
    split = w.centralWidget()
    for sizes in ([300, 900], [900, 300]):
        split.setSizes(sizes)
        qtbot.waitUntil(lambda: w.results.itemWidget(w.results.item(0)).width()
                        == max(200, w.results.viewport().width() - 2), timeout=5000)  # fmt: skip
    assert w.results.horizontalScrollBar().maximum() == 0  # nothing clipped sideways


def test_no_answer_clears_the_viewer_and_weak_sources_are_marked_in_the_prompt(
    qtbot, window, tmp_path
):
    from PySide6.QtGui import QGuiApplication

    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(qtbot, w, "when should the keel be inspected")
    w.open_result(w.results.item(0))
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
    type_search(qtbot, w, "how do i renew my spanish passport",
                until=lambda: "No answer" in w.answer.text())  # fmt: skip
    assert w.viewer.current is None and w.viewer.highlighted == []
    assert w.viewer.page_label.text() == ""
    # the next search's results do not sit beside the older "No answer"
    type_search(qtbot, w, "when should the keel be inspected")
    assert "No answer" not in w.viewer.title.text() and w.viewer.current is None
    w.open_result(w.results.item(0))
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
    type_search(qtbot, w, "boat maintenance keel", until=lambda: w.last_result is not None
                and w.last_result.query == "boat maintenance keel")  # fmt: skip
    assert w.viewer.current is None and w.viewer.highlighted == []  # the old page left
    w.search_opts = w.search_opts.with_overrides(min_dense=0.05, weak_dense=0.99)
    type_search(qtbot, w, "boat maintenance", until=lambda: w.last_result is not None
                and w.last_result.query == "boat maintenance")  # fmt: skip
    w.copy_as_prompt()
    assert "[weak match" in QGuiApplication.clipboard().text()


def test_quit_remove_confirmation_and_document_actions(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtGui import QKeySequence
    from PySide6.QtWidgets import QMessageBox

    w = window
    assert w.quit_action.shortcut() == QKeySequence(QKeySequence.Quit)
    index_docs(qtbot, w, tmp_path)
    w.folder_list.setCurrentRow(0)
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a) or QMessageBox.No)
    qtbot.mouseClick(w.remove_btn, Qt.LeftButton)  # the user said no: nothing is removed
    qtbot.wait(300)
    assert asked and w.folder_list.count() == 1
    opened = []
    monkeypatch.setattr("kbapp.gui.documents.QDesktopServices.openUrl", opened.append)
    row = next(r for r in range(w.doc_model.rowCount()) if w.doc_model.cell(r, NAME) == "garden.md")
    w.docs.doubleClicked.emit(w.doc_model.index(row, 0))
    assert opened and opened[0].toLocalFile().endswith("garden.md")
    # the desktop had no launcher (openUrl said no): the window says so, not silence
    assert "No application on this computer opens .md files" in w.status_label.text()
    assert w.doc_model.cell(row, FOLDER).endswith("docs")
    monkeypatch.setattr("kbapp.gui.documents.QDesktopServices.openUrl", lambda url: True)
    w.status_label.setText("")
    w.docs.doubleClicked.emit(w.doc_model.index(row, 0))
    assert w.status_label.text() == ""
    Path(w.doc_model.docs[row].path).unlink()
    w.docs.doubleClicked.emit(w.doc_model.index(row, 0))
    assert "is not there any more" in w.status_label.text()
    bad = next(r for r in range(w.doc_model.rowCount()) if w.doc_model.cell(r, NAME) == "bad.pdf")
    reason = w.doc_model.cell(bad, REASON)
    tip = w.doc_model.data(w.doc_model.index(bad, REASON), Qt.ToolTipRole)
    assert reason and "MuPDF" not in reason and tip.startswith(reason) and "MuPDF" in tip


def test_the_pdf_page_shows_the_highlight_and_follows_the_pane_width(qtbot, window, tmp_path):
    w = window
    index_docs(qtbot, w, tmp_path)
    type_search(qtbot, w, "when should the keel be inspected")
    w.open_result(w.results.item(0))
    qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
    v = w.viewer
    bar = v.scroll.verticalScrollBar()
    top = min(r[1] for r in v.highlighted) * v.zoom
    qtbot.waitUntil(lambda: bar.value() <= top <= bar.value() + v.scroll.viewport().height(),
                    timeout=5000)  # the highlight is in view, not below the fold  # fmt: skip
    w.resize(1400, 800)
    w.centralWidget().setSizes([1000, 400])  # a narrow viewer: the page fits it
    qtbot.waitUntil(lambda: v.zoom < 0.8, timeout=10000)
    before = v.zoom
    w.centralWidget().setSizes([400, 1000])
    qtbot.waitUntil(lambda: v.zoom > before * 1.2, timeout=10000)  # re-fitted, not kept
    assert v.highlighted and "page 2" in v.page_label.text()


def test_look_in_narrows_the_search_by_kind_and_folder(qtbot, window, tmp_path):
    w = window
    docs = index_docs(qtbot, w, tmp_path)
    sp = w.search_pane
    qtbot.waitUntil(lambda: sp.folder_filter.count() == 2, timeout=10000)  # All + the folder
    assert sp.folder_filter.itemData(1) == str(docs.resolve())

    def shown():
        return {w.results.item(i).data(Qt.UserRole).name for i in range(w.results.count())}

    def choose(combo, data):
        before = w.last_result
        combo.setCurrentIndex(combo.findData(data))  # the search runs again by itself
        qtbot.waitUntil(lambda: w.last_result is not before, timeout=30000)

    type_search(qtbot, w, "when should the keel be inspected")
    assert "boat.pdf" in shown()
    choose(sp.kind_filter, "text")
    assert "boat.pdf" not in shown()
    choose(sp.kind_filter, "pdf")
    assert shown() == {"boat.pdf"}
    choose(sp.folder_filter, str(docs.resolve()))
    assert shown() == {"boat.pdf"}
    sp.kind_filter.setCurrentIndex(sp.kind_filter.findData("slides"))
    qtbot.waitUntil(lambda: "of kind odp, ppt, pptx" in w.answer.text(), timeout=30000)
    assert w.results.count() == 0  # no older results under the message
    assert sp.clear_scope.isVisible()
    before = w.last_result
    qtbot.mouseClick(sp.clear_scope, Qt.LeftButton)  # back to everything, one search
    qtbot.waitUntil(lambda: w.last_result is not before, timeout=30000)
    assert sp.scope().everything and not sp.clear_scope.isVisible()
    assert "boat.pdf" in shown()


def test_by_document_groups_the_list_and_the_prompt_numbers_it_the_same(qtbot, window, tmp_path):
    from PySide6.QtGui import QGuiApplication

    from kbapp.cite import by_document

    w = window
    index_docs(qtbot, w, tmp_path)
    w.search_opts = w.search_opts.with_overrides(min_dense=0.05, weak_dense=0.06)
    type_search(qtbot, w, "keel sails boats tomatoes")
    hits = w.last_result.hits
    docs = [h.doc_id for h in hits]
    assert w.search_pane.group.isChecked()  # grouped unless the user says otherwise
    listed = [w.results.item(i).data(Qt.UserRole) for i in range(w.results.count())]
    assert [h.chunk_id for h in listed] == [h.chunk_id for h in by_document(hits)]
    order = [h.doc_id for h in listed]
    assert order == sorted(order, key=docs.index)  # each document's passages together
    w.copy_as_prompt()
    prompt = QGuiApplication.clipboard().text()
    for n, h in enumerate(listed, 1):
        assert f"[{n}] {h.name}" in prompt


def test_a_documents_other_passages_open_under_its_card_and_close_again(qtbot, window, tmp_path):
    """Eight cards from one file read as one result: one card per document, the rest
    behind a link on it; a click on a card's text still selects and opens it."""
    w = window
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keel.md").write_text("".join(
        f"# {title}\n\n{body}\n\n" for title, body in (
            ("Spring", "Inspect the keel for cracks every spring before the boat is launched."),
            ("Autumn", "Before winter storage, wash the keel and look for blisters in the paint."),
            ("Repairs", "A cracked keel bolt must be replaced by a yard; never sail with one."),
        )))  # fmt: skip
    (docs / "garden.md").write_text("# Garden\n\nTomatoes need six hours of sun every day.\n")
    w.add_paths([str(docs)])
    wait_indexed(qtbot, w)
    w.search_opts = w.search_opts.with_overrides(min_dense=0.05, weak_dense=0.06)
    type_search(qtbot, w, "keel cracks inspection")
    items = [w.results.item(i) for i in range(w.results.count())]
    keel = [it for it in items if it.data(Qt.UserRole).name == "keel.md"]
    assert len(keel) == 3
    lead = w.results.itemWidget(keel[0])
    assert not keel[0].isHidden() and all(it.isHidden() for it in keel[1:])
    assert "2 more passages in this document" in lead.expander.text()
    n_docs = len({it.data(Qt.UserRole).doc_id for it in items})
    assert f"{len(items)} passages in {n_docs} document" in w.answer.text()

    link = lead.expander
    qtbot.mouseClick(link, Qt.LeftButton, pos=link.rect().center())
    assert not any(it.isHidden() for it in keel)
    assert "hide the other 2 passages" in lead.expander.text()
    assert w.results.visualItemRect(keel[2]).height() > 0
    qtbot.mouseClick(link, Qt.LeftButton, pos=link.rect().center())
    assert all(it.isHidden() for it in keel[1:])

    others = [it for it in items if not it.isHidden() and it is not keel[0]]
    target = others[0] if others else keel[0]
    rect = w.results.visualItemRect(target)
    under = w.results.viewport().childAt(rect.center())  # what the mouse really hits
    qtbot.mouseClick(under, Qt.LeftButton, pos=under.mapFrom(w.results.viewport(), rect.center()))
    assert w.results.currentItem() is target
    want = target.data(Qt.UserRole).chunk_id
    qtbot.waitUntil(lambda: w.viewer.current and w.viewer.current.hit.chunk_id == want, timeout=10000)

    w.search_pane.group.setChecked(False)  # rank order, every card shown
    assert not any(w.results.item(i).isHidden() for i in range(w.results.count()))


def test_a_library_inside_a_watched_folder_does_not_wake_its_own_watcher(qtbot, window, tmp_path):
    """Each index run's own writes (folders.json, the vector cache) once woke the watcher:
    an index run every ~1.5 s, for ever."""
    w = window
    make_docs(tmp_path / "docs")
    w.add_paths([str(tmp_path)])  # the library (tmp_path/lib) lies inside this folder
    wait_indexed(qtbot, w)
    qtbot.waitUntil(lambda: str(tmp_path) in w.watcher.directories(), timeout=10000)
    w.rescan.stop()
    w.lib.cache.save()  # the library writes inside the watched folder, as an index run does
    runs = []
    timer = QTimer()
    timer.timeout.connect(lambda: runs.append(w.index_thread is not None))
    timer.start(100)
    qtbot.wait(4000)  # more than two debounce periods
    timer.stop()
    assert not any(runs), "an index run started with nothing changed"


def test_the_window_works_on_a_team_library(qtbot, tmp_path, real_encoder):
    """The same window over a Milvus Lite library: add a folder, index, search, click
    through to the highlighted page."""
    from kbapp.store.milvus import forget_client

    address = f"milvus://{tmp_path}/team.db"
    lib = make_library(address, real_encoder)
    w = MainWindow(lib)
    qtbot.addWidget(w)
    w.show()
    try:
        qtbot.waitUntil(lambda: w.ready, timeout=60000)
        index_docs(qtbot, w, tmp_path)
        type_search(qtbot, w, "when should the keel be inspected")
        first = w.results.item(0)
        assert first.data(Qt.UserRole).page_from == 2
        w.open_result(first)
        qtbot.waitUntil(lambda: w.viewer.current is not None, timeout=10000)
        assert "page 2" in w.viewer.page_label.text() and w.viewer.highlighted
    finally:
        w.close()
        lib.close()
        forget_client(address)
