"""The operators a document can use (L-1, L-2): entries from the schema registry, a tree
model grouped by name, collection or category, fuzzy matching for quick add, and the edit
that places an operator on a canvas.

Contrib operators (``com.microsoft``) come from onnxruntime; :class:`ContribSchemas` loads
them once, off the GUI thread, the first time a document imports such a domain.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QMimeData, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel

from designer.core.document import Document
from designer.core.edits import AddNode
from designer.core.errors import EditError
from designer.core.schema import CATEGORIES, OpSchemaInfo, default_registry, normalize_domain
from designer.core.scope import ScopeId
from designer.ui.canvas import style
from designer.ui.jobs import Job, start_job

OP_MIME = "application/x-onnx-designer-operator"
OP_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # (domain, op_type) of an operator row
SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 2  # sort key of a row
GROUP_ROLE = int(Qt.ItemDataRole.UserRole) + 3  # a group row's label, without its count
VIEWS = ("name", "collection", "category")

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class OpEntry:
    """One operator available to a document, as the palette shows it."""

    name: str
    domain: str
    since_version: int
    opset: int  # the version of ``domain`` the document imports
    category: str
    summary: str
    outputs: int

    @property
    def label(self) -> str:
        return self.name if not self.domain else f"{self.name}  ({self.domain})"

    @property
    def collection(self) -> str:
        return f"{self.domain or 'ai.onnx'} (opset {self.opset})"


def doc_summary(doc: str, limit: int = 420) -> str:
    """First paragraph of a schema doc as plain text (markdown links, tags, backticks and
    extra white space removed; cut at ``limit`` characters)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", doc.strip()) if p.strip()]
    if not paragraphs:
        return "No documentation."
    text = _LINK.sub(r"\1", paragraphs[0])
    text = html.unescape(_TAG.sub("", text)).replace("`", "").replace("**", "")
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def output_count(schema: OpSchemaInfo | None) -> int:
    """Outputs a new node gets: the required ones (at least ``min_output``), 1 if unknown."""
    if schema is None:
        return 1
    required = 0
    for param in schema.outputs:
        if param.option == "single":
            required += 1
        elif param.option == "variadic":
            required += max(1, param.min_arity)
    return max(1, schema.min_output, min(required, 64))


def palette_entries(opset_imports: Mapping[str, int]) -> list[OpEntry]:
    """Every operator of the imported opsets known to the registry, sorted by domain/name."""
    entries = []
    for info in default_registry().ops_for(opset_imports):
        version = opset_imports.get(info.domain, opset_imports.get("ai.onnx", 0))
        entries.append(
            OpEntry(
                name=info.name,
                domain=info.domain,
                since_version=info.since_version,
                opset=int(version),
                category=info.category,
                summary=doc_summary(info.doc),
                outputs=output_count(info),
            )
        )
    return entries


LOCAL_FUNCTIONS = "local functions"  # the palette category of the document's functions


def function_entries(doc: Document, scope_id: ScopeId) -> list[OpEntry]:
    """The document's local functions as palette entries, dropped like operators (a call
    node). A function is not offered inside its own body."""
    imports = doc.opset_imports
    entries = []
    for fn in doc.model.functions:
        if scope_id.function == (fn.domain, fn.name, fn.overload):
            continue
        signature = f"({', '.join(fn.input)}) → ({', '.join(fn.output)})"
        summary = f"Local function {signature}"
        if fn.doc_string:
            summary = f"{doc_summary(fn.doc_string)}\n{summary}"
        entries.append(
            OpEntry(
                name=fn.name,
                domain=fn.domain,
                since_version=0,
                opset=int(imports.get(normalize_domain(fn.domain), 1)),
                category=LOCAL_FUNCTIONS,
                summary=summary,
                outputs=max(1, len(fn.output)),
            )
        )
    return entries


def imports_contrib(opset_imports: Iterable[str]) -> bool:
    return any(d == "com.microsoft" or d.startswith("com.microsoft.") for d in opset_imports)


def fuzzy_score(query: str, name: str) -> int | None:
    """How well ``query`` matches ``name`` (higher is better), None when it does not.

    The query's characters must appear in order (case-insensitive); exact and prefix
    matches, contiguous runs and matches at word starts (capitals, after ``_``) score more.
    O(len(name))."""
    q = query.strip().lower()
    if not q:
        return 0
    low = name.lower()
    if low == q:
        return 10_000
    score = 5_000 if low.startswith(q) else 2_000 if q in low else 0
    pos = -1
    run = 0
    for ch in q:
        found = low.find(ch, pos + 1)
        if found < 0:
            return None
        run = run + 1 if found == pos + 1 else 0
        score += 10 + 15 * run
        if found == 0 or name[found].isupper() or name[found - 1] in "_.":
            score += 20
        score -= found - pos - 1  # gaps cost a little
        pos = found
    return score - len(name)


def fuzzy_filter(query: str, entries: Iterable[OpEntry]) -> list[OpEntry]:
    """Entries matching ``query`` best first (ties by name)."""
    scored = [(s, e) for e in entries if (s := fuzzy_score(query, e.name)) is not None]
    scored.sort(key=lambda se: (-se[0], se[1].name.lower(), se[1].domain))
    return [e for _s, e in scored]


def add_op_edit(
    doc: Document, scope_id: ScopeId, domain: str, op_type: str, at: tuple[float, float]
) -> AddNode:
    """The AddNode placing a new ``op_type`` centred on scene point ``at`` with a generated
    unique name; raises EditError when the document does not import that operator."""
    imports = doc.opset_imports
    key = normalize_domain(domain)
    if key not in imports:
        raise EditError(f"the model does not import domain '{domain or 'ai.onnx'}'")
    function = next(
        (f for f in doc.model.functions if normalize_domain(f.domain) == key and f.name == op_type),
        None,
    )
    if function is not None:  # a call of a local function
        if scope_id.function == (function.domain, function.name, function.overload):
            raise EditError(f"local function '{op_type}' cannot call itself")
        outputs = max(1, len(function.output))
    else:
        schema = default_registry().get(op_type, key, imports[key])
        if schema is None and not imports_contrib([key]):
            raise EditError(
                f"'{op_type}' is not an operator of {domain or 'ai.onnx'} {imports[key]}"
            )
        outputs = output_count(schema)
    x = at[0] - style.MIN_WIDTH / 2
    y = at[1] - style.OP_HEIGHT / 2
    return AddNode(
        scope_id,
        op_type,
        domain=key,
        outputs=outputs,
        position=(float(round(x)), float(round(y))),
    )


def encode_op(domain: str, op_type: str) -> QMimeData:
    mime = QMimeData()
    mime.setData(OP_MIME, f"{domain}\n{op_type}".encode())
    mime.setText(op_type)
    return mime


def decode_op(mime: QMimeData) -> tuple[str, str] | None:
    """(domain, op_type) carried by palette drag data, or None for other data."""
    if not mime.hasFormat(OP_MIME):
        return None
    domain, _sep, op_type = bytes(mime.data(OP_MIME).data()).decode().partition("\n")
    return (domain, op_type) if op_type else None


class PaletteModel(QStandardItemModel):
    """Operators as a tree: flat by name, or grouped by collection or by category. Operator
    rows carry :data:`OP_ROLE` and drag as :data:`OP_MIME`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.entries: list[OpEntry] = []
        self.view = "category"

    def set_entries(self, entries: list[OpEntry], view: str | None = None) -> None:
        if view is not None:
            if view not in VIEWS:
                raise ValueError(f"unknown palette view {view!r}")
            self.view = view
        self.entries = entries
        self.clear()
        root = self.invisibleRootItem()
        if self.view == "name":
            for entry in entries:
                root.appendRow(self._op_item(entry))
            return
        groups: dict[str, QStandardItem] = {}
        for entry in entries:
            label = entry.collection if self.view == "collection" else entry.category
            group = groups.get(label)
            if group is None:
                group = groups[label] = QStandardItem(label)
                group.setData(label, GROUP_ROLE)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                order = CATEGORIES.index(label) if label in CATEGORIES else len(CATEGORIES)
                group.setData(f"{order:03d}" if self.view == "category" else label, SORT_ROLE)
                root.appendRow(group)
            group.appendRow(self._op_item(entry))
        for group in groups.values():
            group.setText(f"{group.text()} ({group.rowCount()})")

    @staticmethod
    def _op_item(entry: OpEntry) -> QStandardItem:
        item = QStandardItem(entry.label)
        item.setFlags(
            Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled
        )
        item.setData((entry.domain, entry.name), OP_ROLE)
        item.setData(entry.name.lower(), SORT_ROLE)
        since = (
            "local function"
            if entry.category == LOCAL_FUNCTIONS
            else f"since opset {entry.since_version}"
        )
        item.setToolTip(f"{entry.name} ({entry.domain or 'ai.onnx'}, {since})\n\n{entry.summary}")
        return item

    def mimeTypes(self) -> list[str]:
        return [OP_MIME]

    def mimeData(self, indexes: Iterable[QModelIndex | QPersistentModelIndex]) -> QMimeData:
        for index in indexes:
            op = index.data(OP_ROLE)
            if op:
                return encode_op(*op)
        return QMimeData()

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.CopyAction


class ContribSchemas(QObject):
    """Loads ONNX Runtime contrib schemas into the default registry once, off the GUI
    thread; ``ready(status)`` follows (status says what was found, or why nothing)."""

    ready = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.loaded = False
        self.status = ""
        self.job: Job | None = None

    def ensure(self) -> bool:
        """True when loaded; otherwise start loading (once) and return False."""
        if self.loaded:
            return True
        if self.job is None:
            self.job = start_job(_load_contrib, self)
            self.job.finished.connect(self._done)
            self.job.failed.connect(lambda message: self._done(f"contrib operators: {message}"))
        return False

    def _done(self, status: object) -> None:
        self.loaded = True
        self.status = str(status)
        self.ready.emit(self.status)


def _load_contrib(_report: object, _cancelled: object) -> str:
    from designer.activities.ort_schemas import contrib_schemas_status, register_contrib_schemas

    register_contrib_schemas(default_registry())
    return contrib_schemas_status()


_contrib: ContribSchemas | None = None


def contrib_schemas() -> ContribSchemas:
    """The process-wide loader (created on first use, on the GUI thread)."""
    global _contrib
    if _contrib is None:
        _contrib = ContribSchemas()
    return _contrib
