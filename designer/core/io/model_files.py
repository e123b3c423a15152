"""The files a model lives in: the model file, the external data files its tensors name
and its companion layout file. A command or dialog that writes a file refuses any of them
as its output (an image or a layout written over a model's weights destroyed them).
Qt-free."""

from __future__ import annotations

from pathlib import Path

import onnx

from designer.core.errors import DesignerError
from designer.core.io.atomic import same_file
from designer.core.io.companion import companion_path
from designer.core.io.external import ExternalRef, is_external, iter_model_tensors


def model_files(
    model: onnx.ModelProto, path: Path, base_dir: Path | None = None
) -> list[tuple[Path, str]]:
    """(file, what it is) for ``model`` saved at ``path``: the model file, its layout file,
    and each external data file (named relative to ``base_dir``, by default ``path``'s
    folder). Cost: one walk over the model's tensors."""
    folder = base_dir if base_dir is not None else path.parent
    files: dict[Path, str] = {path: "the model itself", companion_path(path): "its layout file"}
    for tensor in iter_model_tensors(model):
        if is_external(tensor):
            location = ExternalRef.of(tensor).location
            if location:
                files.setdefault(
                    folder / location,
                    f"the external data file of tensor '{tensor.name}'",
                )
    return list(files.items())


def refuse_model_files(
    target: Path, model: onnx.ModelProto, path: Path, base_dir: Path | None = None
) -> None:
    """DesignerError (one line) when ``target`` is one of :func:`model_files`."""
    for file, what in model_files(model, path, base_dir):
        if not same_file(file, target):
            continue
        if file == path:  # as every command says it (designer.commands.outputs)
            raise DesignerError(f"{target}: the output path is the input; choose another file")
        raise DesignerError(
            f"{target}: this is {what} of {path.name}; writing there would destroy it, "
            "choose another file name"
        )
