"""A plain table model shared by every report (ORT, TensorRT): columns, rows, CSV/JSON export.

Qt-free on purpose: the GUI wraps a :class:`Table` in a ``QAbstractTableModel`` and the CLI
writes it out with :func:`write_tables`. File names follow SPEC E-1:
``<profile_name>_<report>.<ext>``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["Cell", "Column", "Table", "report_file_name", "write_tables"]

Cell = str | int | float | None
ColumnKind = Literal["text", "int", "float", "percent"]
ExportFormat = Literal["csv", "json"]


@dataclass(frozen=True)
class Column:
    """One column: a key (CSV header and JSON field), a label for people, a kind and a unit."""

    key: str
    label: str
    kind: ColumnKind = "text"
    unit: str = ""


@dataclass
class Table:
    """Rows of cells under named columns; rows are tuples in column order."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: list[tuple[Cell, ...]] = field(default_factory=list)

    def column_index(self, key: str) -> int:
        """Position of the column called ``key`` (KeyError if none)."""
        for i, column in enumerate(self.columns):
            if column.key == key:
                return i
        raise KeyError(key)

    def column_values(self, key: str) -> list[Cell]:
        i = self.column_index(key)
        return [row[i] for row in self.rows]

    def records(self) -> list[dict[str, Cell]]:
        """Rows as dicts keyed by column key (the JSON form). Cost: O(rows × columns)."""
        keys = [c.key for c in self.columns]
        return [dict(zip(keys, row, strict=True)) for row in self.rows]

    def sorted_by(self, key: str, descending: bool = True) -> Table:
        """A copy sorted by one column; empty cells go last."""
        i = self.column_index(key)
        present = [r for r in self.rows if r[i] is not None]
        missing = [r for r in self.rows if r[i] is None]
        present.sort(key=lambda r: r[i], reverse=descending)  # type: ignore[arg-type,return-value]
        return Table(self.name, self.title, self.columns, present + missing)

    def to_csv(self) -> str:
        """The table as CSV text with a header row of column keys; floats keep full precision."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([c.key for c in self.columns])
        for row in self.rows:
            writer.writerow(["" if cell is None else cell for cell in row])
        return out.getvalue()

    def to_json(self) -> dict[str, object]:
        """``{"name", "title", "columns": [{key, label, kind, unit}], "rows": [records]}``."""
        return {
            "name": self.name,
            "title": self.title,
            "columns": [
                {"key": c.key, "label": c.label, "kind": c.kind, "unit": c.unit}
                for c in self.columns
            ],
            "rows": self.records(),
        }


def report_file_name(profile_name: str, report: str, ext: str) -> str:
    """``<profile_name>_<report>.<ext>`` (SPEC E-1)."""
    return f"{profile_name}_{report}.{ext}"


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_tables(
    tables: Iterable[Table] | Mapping[str, Table],
    folder: Path,
    profile_name: str,
    formats: Sequence[ExportFormat] = ("csv", "json"),
) -> list[Path]:
    """Write each table as ``<profile_name>_<table.name>.<ext>`` into ``folder`` (created if
    needed), atomically per file. Returns the paths written. Cost: O(total cells)."""
    items = list(tables.values()) if isinstance(tables, Mapping) else list(tables)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for table in items:
        for ext in formats:
            path = folder / report_file_name(profile_name, table.name, ext)
            text = table.to_csv() if ext == "csv" else json.dumps(table.to_json(), indent=2) + "\n"
            _atomic_write(path, text)
            written.append(path)
    return written
