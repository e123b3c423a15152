"""The type checker as a gate in front of a transform or after it: the first error of a
model, as one line, or None."""

from __future__ import annotations

from pathlib import Path

import onnx

from designer.core.analysis.checker import check_document
from designer.core.document import Document
from designer.core.errors import one_line


def first_error(model: onnx.ModelProto, path: Path | None = None) -> str | None:
    """The first error the type checker finds in ``model`` (``str`` of the diagnostic, e.g.
    ``main graph / node Add_1: input 'x' is not produced by any node``), with the number
    of further errors, or None when there is none.

    Cost: one full check (see :func:`check_document`); ``model`` is only read (the document
    built around it is never edited).
    """
    result = check_document(Document(model, path))
    errors = result.errors
    if not errors:
        return None
    first = errors[0]
    where = first.scope_name or "main graph"
    if first.node_name:
        where += f" / node {first.node_name}"
    more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
    return one_line(f"{where}: {first.message}{more}")
