"""Open ONNX models: one clear error for every kind of bad file, weights left on disk."""

from __future__ import annotations

import stat
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from designer.core.document import Document
from designer.core.errors import ModelLoadError
from designer.core.io.external import (
    DataStamps,
    FileCache,
    external_problem,
    is_external,
    iter_model_tensors,
    stamp_files,
)
from designer.core.text_check import text_is_utf8
from designer.core.validate import check_model

PROTOBUF_LIMIT = 2**31 - 1


def _raise_recursion_limit() -> int:
    """Let protobuf parse messages nested deeper than its default 100 levels (an If inside
    an If takes 3 levels: 33 nested Ifs reach it). The upb and C++ runtimes allow it through
    SetAllowOversizeProtos (which also lifts their 64 MiB limit); the pure-Python runtime
    keeps its limit. Returns the nesting limit now in force."""
    from google.protobuf.internal import api_implementation

    kind = api_implementation.Type()
    try:
        if kind == "upb":
            from google._upb import _message

            _message.SetAllowOversizeProtos(True)
            return 65535
        if kind == "cpp":  # pragma: no cover - not the runtime installed here
            from google.protobuf.pyext import _message as cpp_message

            cpp_message.SetAllowOversizeProtos(True)
            return 2**31 - 1
    except (ImportError, AttributeError):  # pragma: no cover - an unknown protobuf build
        pass
    return 100


#: How deep protobuf messages may nest when parsed here.
RECURSION_LIMIT = _raise_recursion_limit()


#: Files up to this size have their text checked by a second parse (designer.core.text_check).
TEXT_CHECK_BYTES = 256 << 20


def read_model(path: Path | str, base_dir: Path | None = None) -> onnx.ModelProto:
    """Parse the model file at ``path`` without loading external data (see
    :func:`read_model_stamped`, which this is without the data files' stamps)."""
    return read_model_stamped(path, base_dir)[0]


def read_model_stamped(
    path: Path | str, base_dir: Path | None = None
) -> tuple[onnx.ModelProto, DataStamps]:
    """Parse the model file at ``path`` without loading external data; also return the
    stamps of the data files its external tensors use (empty when there are none), what a
    later save checks them against (:func:`designer.core.io.external.check_unchanged`).

    External tensors stay references (read later, on demand); each one is checked to exist
    and to be long enough, relative to ``base_dir`` (default: the model's folder).
    Raises ModelLoadError with a one-line message naming the file.
    Cost: one read of the file, two protobuf parses (the second checks that all text is
    UTF-8: designer.core.text_check) and one walk over the graph structure
    (designer.core.validate); the external-data check (and one stat per data file for
    its stamp) only runs when that walk saw an external tensor.
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise ModelLoadError(f"{path}: is a folder, not a model file")
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise ModelLoadError(f"{path}: not a regular file (a device, pipe or socket)")
        size = info.st_size
        if size > PROTOBUF_LIMIT:
            raise ModelLoadError(
                f"{path}: {size / 2**30:.1f} GiB is over protobuf's 2 GiB limit; a model this "
                "large must keep its weights in external data files"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelLoadError(f"{path}: file not found") from None
    except PermissionError:
        raise ModelLoadError(f"{path}: permission denied; check the file's access rights") from None
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not data:
        raise ModelLoadError(f"{path}: file is empty")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        if "MaxDepth" in str(exc) or "recursion" in str(exc).lower():
            raise ModelLoadError(
                f"{path}: the model is nested deeper than protobuf's recursion limit of "
                f"{RECURSION_LIMIT} message levels"
            ) from None
        raise ModelLoadError(
            f"{path}: not an ONNX model (the protobuf data is invalid or truncated: {exc})"
        ) from None
    _require_model(model, path)
    # The text fields are checked in C by a second parse of the same bytes (the walk would
    # read every name in Python); only when that parse refuses them does the walk read them.
    # A file of big inline weights is walked instead: few names, and a second parse would
    # hold a second copy of every weight for a moment.
    twin = len(data) <= TEXT_CHECK_BYTES and text_is_utf8(data)
    checked = check_model(model, text_checked=twin)
    if checked.problem is not None:
        raise ModelLoadError(f"{path}: {checked.problem}")
    # The same walk saw every tensor's data_location: only then is one external.
    stamps: DataStamps = {}
    if checked.maybe_external:
        files = _check_external(model, path, base_dir or path.parent)
        if files:
            stamps = stamp_files(dict.fromkeys(real for real, _size in files.values()))
    return model, stamps


def _require_model(model: onnx.ModelProto, path: Path) -> None:
    """Reject protobuf data that parsed but is no ONNX model (another message type, noise)."""
    if model.ir_version <= 0 or not (model.HasField("graph") or model.functions):
        raise ModelLoadError(
            f"{path}: not an ONNX model (no IR version or graph; is it another kind of "
            "protobuf file, e.g. a tensor?)"
        )


def _check_external(model: onnx.ModelProto, path: Path, base_dir: Path) -> FileCache:
    """Check every external tensor's data (ModelLoadError naming the first that cannot be
    read); returns the data files checked: {location: (real path, size)}."""
    cache: FileCache = {}  # each data file is checked once (real path inside base_dir)
    for tensor in iter_model_tensors(model):
        if is_external(tensor):
            problem = external_problem(tensor, base_dir, cache)
            if problem is not None:
                raise ModelLoadError(f"{path}: {problem}")
    return cache


def open_document(path: Path | str, base_dir: Path | None = None) -> Document:
    """Open ``path`` as a new Document (see :func:`read_model` for errors and costs).

    ``base_dir`` is where external data lives when not beside the model (crash recovery).
    The document keeps the stamps of its data files as they are now (``data_stamps``): a
    save refuses to read one that changed since.
    """
    path = Path(path)
    model, stamps = read_model_stamped(path, base_dir)
    doc = Document(model, path.resolve())
    if base_dir is not None:
        doc.base_dir = base_dir
    doc.data_stamps = stamps
    return doc
