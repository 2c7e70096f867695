"""The scenario library: the built-ins and the user's own, with search and tags."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLineEdit, QPushButton, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from .. import assets
from ..i18n import sep, tr
from ..scenario import localized
from . import settings


@dataclass(frozen=True)
class Entry:
    path: Path
    title: str
    tags: tuple[str, ...]
    notes: str
    builtin: bool
    other: str = ""        # the title and notes in the other language, found by search too
    trace: bool = False    # a recorded trace (.wvtrace): the "Traces" group
    kernel: str = ""       # a trace's kernel function and CUDA source file (compare picks by them)
    source: str = ""
    launch: bool = False   # a launch file to record (kernels/**/*.launch.toml): the "Launch files" group

    @property
    def name(self) -> str:
        return self.path.stem

    def matches(self, words: list[str], tag: str | None) -> bool:
        if tag and tag not in self.tags:
            return False
        hay = " ".join((self.name, self.title, " ".join(self.tags), self.notes, self.other)).lower()
        return all(w in hay for w in words)


# What the library shows of a file (a scenario's title, tags and notes, a launch file's title
# and kernel, a trace's checked header), by the file's path and identity (inode, size, times):
# a window lists every built-in, launch file and shipped trace four times while it is built (the
# library, the comparison's two pickers, each again in the interface language), and parsing 210
# files (checking 70 trace headers against the schema) each time was most of the time a window
# took to open. A file that is changed, replaced or touched is read again; one that could not be
# read is not remembered (listing it again tries again).
_FIELDS: dict[tuple, dict] = {}
_FIELDS_MAX = 4096
# The same fields on disk, in the cache folder (viz.cachedir), so that the next start does not
# check the 70 shipped trace headers again either (about 0.4 s of a warm start). Keyed by the
# same identity; a file warpviz wrote itself, and read back as hostile all the same: anything
# that is not a table of the fields above, with text values, is ignored (and rewritten).
DISK_CACHE = "library-fields.json"
DISK_CACHE_MAX_BYTES = 8 * 2**20
_TEXT_FIELDS = ("title", "notes", "title_zh", "notes_zh", "kernel", "source_name")
_disk: dict[str, dict] | None = None
_disk_new = False


def _clean_fields(raw) -> dict | None:
    """A cached entry's fields as ``_scenario_fields`` / ``_trace_fields`` / ``_launch_fields``
    make them, or None for anything else."""
    if not isinstance(raw, dict) or not set(raw) <= {*_TEXT_FIELDS, "tags", "gpu"}:
        return None
    out = {}
    for k, v in raw.items():
        if k in _TEXT_FIELDS:
            if not isinstance(v, str) or len(v) > 100_000:
                return None
            out[k] = v
        elif k == "tags":
            if not isinstance(v, list) or len(v) > 64 or not all(isinstance(t, str) and len(t) < 200 for t in v):
                return None
            out[k] = tuple(v)
        else:
            name = v.get("name") if isinstance(v, dict) else ""
            if not isinstance(v, dict) or set(v) != {"name"} or not (name is None or isinstance(name, str)):
                return None
            out[k] = {"name": name}
    return out


def _disk_fields() -> dict[str, dict]:
    global _disk
    if _disk is None:
        _disk = {}
        from .. import cachedir
        from ..fileio import read_json_limited

        try:
            raw = read_json_limited(cachedir.root() / DISK_CACHE, DISK_CACHE_MAX_BYTES, "library cache")
        except Exception:  # noqa: BLE001 - missing, unreadable or not JSON: no cache, read the files
            raw = None
        if isinstance(raw, dict) and raw.get("version") == 1 and isinstance(raw.get("fields"), dict):
            for k, v in list(raw["fields"].items())[:_FIELDS_MAX]:
                fields = _clean_fields(v)
                if isinstance(k, str) and fields is not None:
                    _disk[k] = fields
    return _disk


def save_disk_cache() -> None:
    """Write the fields read since the start to the cache folder (once there is anything new;
    a cache folder that cannot be written is no cache)."""
    global _disk_new
    if not _disk_new or _disk is None:
        return
    from .. import cachedir
    from ..fileio import write_atomic

    _disk_new = False
    data = {"version": 1, "fields": {k: {f: list(v) if isinstance(v, tuple) else v for f, v in d.items()}
                                     for k, d in list(_disk.items())[-_FIELDS_MAX:]}}
    try:
        write_atomic(cachedir.root() / DISK_CACHE, json.dumps(data, ensure_ascii=False))
    except (OSError, ValueError):
        pass


def _identity(path: Path, kind: str) -> tuple | None:
    import stat as stat_module

    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    if not stat_module.S_ISREG(st.st_mode):
        return None                                # a pipe or a device: never remembered
    return (kind, os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _remembered(path: Path, kind: str, read) -> dict:
    """``read(path)``'s fields of ``path``, from memory while the file is the same file.
    ``read`` raises ``LookupError`` for a file it cannot read (then {} and nothing kept)."""
    global _disk_new
    key = _identity(path, kind)
    if key is not None and key in _FIELDS:
        return _FIELDS[key]
    disk_key = json.dumps([str(x) for x in key]) if key is not None else None
    fields = _disk_fields().get(disk_key) if disk_key is not None else None
    if fields is None:
        try:
            fields = read(path)
        except LookupError:
            return {}
        if disk_key is not None and _clean_fields({k: list(v) if isinstance(v, tuple) else v
                                                   for k, v in fields.items()}) is not None:
            _disk_fields()[disk_key] = fields
            _disk_new = True
    if key is not None:
        if len(_FIELDS) >= _FIELDS_MAX:
            _FIELDS.clear()
        _FIELDS[key] = fields
    return fields


def _strings(raw: dict, keys: tuple[str, ...]) -> dict:
    return {k: raw[k] for k in keys if isinstance(raw.get(k), str)}


def _scenario_fields(path: Path) -> dict:
    from ..scenario import ScenarioError, read_text

    try:            # a regular file of a scenario's size only: a pipe or a huge file is not read
        raw = tomllib.loads(read_text(path))
    except (ScenarioError, tomllib.TOMLDecodeError, RecursionError) as e:
        raise LookupError(path) from e
    fields = _strings(raw, ("title", "notes", "title_zh", "notes_zh"))
    tags = raw.get("tags", [])
    fields["tags"] = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
    return fields


def _launch_fields(path: Path) -> dict:
    from ..trace import TraceError
    from ..trace.launch import MAX_LAUNCH_FILE_BYTES, read_text_file

    try:      # bounded, a regular file only; deep TOML is no crash
        raw = tomllib.loads(read_text_file(path, "launch file", MAX_LAUNCH_FILE_BYTES))
    except (TraceError, tomllib.TOMLDecodeError, RecursionError, ValueError) as e:
        raise LookupError(path) from e
    return _strings(raw, ("kernel", "title"))


def _trace_fields(path: Path) -> dict:
    from ..trace import TraceError
    from ..trace.tracefile import read_header

    try:
        h = read_header(path)
    except TraceError as e:
        raise LookupError(path) from e
    fields = {k: h[k] for k in ("title", "kernel", "source_name") if k in h}
    if "gpu" in h:
        fields["gpu"] = {"name": (h.get("gpu") or {}).get("name")}
    return fields


def read_entry(path: Path, builtin: bool) -> Entry:
    """Title, tags and notes straight from the TOML (cheap: no validation), in the interface
    language: ``title_zh`` / ``notes_zh`` when it is Chinese and the file has them."""
    raw = _remembered(path, "scenario", _scenario_fields)
    tags = raw.get("tags", ())
    def text(key: str) -> str:
        return raw.get(key) if isinstance(raw.get(key), str) else ""

    title = localized(text("title"), text("title_zh")) or path.stem
    notes = localized(text("notes"), text("notes_zh"))
    other = " ".join(text(k) for k in ("title", "notes", "title_zh", "notes_zh") if text(k) not in (title, notes))
    return Entry(path, title, tags, notes.strip(), builtin, other)


def read_trace_entry(path: Path, builtin: bool = True) -> Entry:
    """A trace's title and kernel from its checked header (``tracefile.read_header``: the
    arrays are not read); tagged "trace". A file that cannot be read is listed by its name
    (opening it says why)."""
    h = _remembered(path, "trace", _trace_fields)
    title = str(h.get("title") or path.stem)
    gpu = str((h.get("gpu") or {}).get("name") or "")
    notes = tr("Trace of the kernel {kernel}, recorded on {gpu}", kernel=h.get("kernel", path.stem), gpu=gpu or "?")
    return Entry(path, title, ("trace",), notes, builtin, str(h.get("kernel", "")), trace=True,
                 kernel=str(h.get("kernel", "")), source=str(h.get("source_name", "")))


def read_launch_entry(path: Path) -> Entry:
    """A launch file's title and kernel straight from its TOML (not checked: opening it says
    what is wrong); tagged "launch"."""
    raw = _remembered(path, "launch", _launch_fields)
    kernel = raw.get("kernel") if isinstance(raw.get("kernel"), str) else ""
    title = raw.get("title") if isinstance(raw.get("title"), str) else path.name
    notes = tr("Launch file of the kernel {kernel}: open it, then Record trace in the GPU panel", kernel=kernel or "?")
    return Entry(path, title, ("launch",), notes, True, kernel, kernel=kernel, launch=True)


def launch_files() -> list[Path]:
    """The launch files of ``kernels/`` (the built-ins' hand-written kernels and the test kernels)."""
    from .. import assets

    try:
        return sorted(assets.kernels_dir().rglob("*.launch.toml"))
    except OSError:
        return []


def recordings() -> list[Path]:
    """The traces the app recorded (the user data folder's ``traces``)."""
    d = settings.data_dir() / "traces"
    return sorted(d.glob("*.wvtrace")) if d.is_dir() else []


def tag_label(tag: str) -> str:
    """A tag as the library shows it: in Chinese its catalog entry ``tag:NAME`` with the tag
    itself (what ``warpviz list --tag`` takes) in brackets; in English the tag."""
    text = tr(f"tag:{tag}")
    return tag if text in (f"tag:{tag}", tag) or text.lower() == tag else f"{text}（{tag}）"


def entries() -> list[Entry]:
    out = [read_entry(p, True) for p in sorted(assets.scenario_dir().glob("*.toml"))]
    out += [read_entry(p, False) for p in sorted(settings.user_scenario_dir().glob("*.toml"))]
    from ..trace.tracefile import shipped

    out += [read_trace_entry(p) for p in shipped()]
    out += [read_trace_entry(p, False) for p in recordings()]
    out += [read_launch_entry(p) for p in launch_files()]
    save_disk_cache()
    return out


def unique_user_path(stem: str) -> Path:
    d = settings.user_scenario_dir()
    path = d / f"{stem}.toml"
    k = 2
    while path.exists():
        path = d / f"{stem}-{k}.toml"
        k += 1
    return path


class LibraryPanel(QWidget):
    openRequested = Signal(object)     # Path
    newRequested = Signal()
    deleteRequested = Signal(object)   # Path

    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setObjectName("librarySearch")
        self.search.setClearButtonEnabled(True)
        self.tag = QComboBox()
        self.tag.setObjectName("libraryTag")
        self.tree = QTreeWidget()
        self.tree.setObjectName("library")
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(True)
        self.b_new = QPushButton()
        self.b_new.setObjectName("newScenario")
        self.b_delete = QPushButton()
        self.b_delete.setObjectName("deleteScenario")
        row = QHBoxLayout()
        row.addWidget(self.search, 2)
        row.addWidget(self.tag, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.b_new)
        buttons.addWidget(self.b_delete)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.tree, 1)
        lay.addLayout(buttons)
        self.search.textChanged.connect(self.filter)
        self.tag.currentIndexChanged.connect(self.filter)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        self.b_new.clicked.connect(self.newRequested)
        self.b_delete.clicked.connect(self._delete)
        self.entries: list[Entry] = []
        self.current: Path | None = None
        self.reload()

    def reload(self) -> None:
        self.entries = entries()
        tags = sorted({t for e in self.entries for t in e.tags})
        keep = self.tag.currentData()
        self.tag.blockSignals(True)
        self.tag.clear()
        self.tag.addItem(tr("all tags"), None)
        for t in tags:
            self.tag.addItem(tag_label(t), t)
        i = self.tag.findData(keep)
        self.tag.setCurrentIndex(max(0, i))
        self.tag.blockSignals(False)
        self.filter()

    def filter(self) -> None:
        words = self.search.text().lower().split()
        tag = self.tag.currentData()
        self.tree.clear()
        groups = {True: QTreeWidgetItem([tr("Built-in scenarios")]),
                  False: QTreeWidgetItem([tr("My scenarios ({folder})", folder=settings.user_scenario_dir())]),
                  "trace": QTreeWidgetItem([tr("Traces (real kernels recorded on an H100)")]),
                  "mine": QTreeWidgetItem([tr("My recorded traces ({folder})", folder=settings.data_dir() / "traces")]),
                  "launch": QTreeWidgetItem([tr("Launch files to record (kernels/)")])}
        for g in groups.values():
            g.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(g)
        for e in self.entries:
            if not e.matches(words, tag):
                continue
            item = QTreeWidgetItem([f"{e.title}"])
            item.setToolTip(0, f"{e.name}\n{', '.join(map(tag_label, e.tags))}\n\n{e.notes}")
            item.setData(0, Qt.ItemDataRole.UserRole, str(e.path))
            group = ("launch" if e.launch else "mine" if e.trace and not e.builtin else "trace" if e.trace
                     else e.builtin)
            groups[group].addChild(item)
            if self.current is not None and e.path == self.current:
                self.tree.setCurrentItem(item)
        for key, g in groups.items():
            # 54 launch files: listed when a search or the tag asks for them, folded otherwise
            g.setExpanded(key != "launch" or bool(words) or tag == "launch" or (
                self.current is not None and str(self.current).endswith(".launch.toml")))
            g.setHidden(key == "mine" and g.childCount() == 0)
            count = f"  {sep(' (').strip()}{g.childCount()}{sep(')')}"
            g.setText(0, g.text(0) + count if count not in g.text(0) else g.text(0))

    def visible_names(self) -> list[str]:
        return [p.stem for p in self.visible_paths()]

    def visible_paths(self) -> list[Path]:
        """The files listed, in the order shown (the tag filter and search applied)."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            g = self.tree.topLevelItem(i)
            out += [Path(g.child(j).data(0, Qt.ItemDataRole.UserRole)) for j in range(g.childCount())]
        return out

    def item_for(self, name: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            g = self.tree.topLevelItem(i)
            for j in range(g.childCount()):
                if Path(g.child(j).data(0, Qt.ItemDataRole.UserRole)).stem == name:
                    return g.child(j)
        return None

    def _clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        path = item.data(0, Qt.ItemDataRole.UserRole)
        if path:
            self.openRequested.emit(Path(path))

    def _delete(self) -> None:
        item = self.tree.currentItem()
        path = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        if path and Path(path).parent.resolve() == settings.user_scenario_dir().resolve():
            self.deleteRequested.emit(Path(path))

    def set_current(self, path: Path | None) -> None:
        self.current = path
        self.filter()

    def retranslate(self) -> None:
        self.search.setPlaceholderText(tr("Search scenarios (name, title, tag, notes)"))
        self.b_new.setText(tr("New from current"))
        self.b_new.setToolTip(tr("Copy the scenario on screen into your own scenarios, where it is autosaved"))
        self.b_delete.setText(tr("Delete"))
        self.b_delete.setToolTip(tr("Delete the selected scenario of your own"))
        self.reload()
