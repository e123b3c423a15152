"""Reading and writing models (atomic saves, lazy external data)."""

from designer.core.io.load import open_document, read_model
from designer.core.io.save import SaveReport, save_document, write_model

__all__ = ["SaveReport", "open_document", "read_model", "save_document", "write_model"]
