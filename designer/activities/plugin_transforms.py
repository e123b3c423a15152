"""Model-wide transforms from plug-ins (entry-point group ``onnx_designer.transforms``). Qt-free.

The entry point names an object, or a class instantiated without arguments, with

- ``title: str`` — the menu text (default: the entry-point name),
- ``description: str`` — one line for the tooltip and ``--help`` (default: empty),
- ``run(model: onnx.ModelProto, base_dir: pathlib.Path | None) -> onnx.ModelProto`` — the new
  model. ``base_dir`` is the folder of the model's external data (None for a new model not
  saved yet). The designer passes a copy of the
  document's model, so a plug-in that changes ``model`` in place and returns it works too.

In the window the result replaces the document as one undo step (or is written to a file);
``onnx-designer transform NAME IN OUT`` runs it without the window. A transform that raises,
or returns something else than a model, is reported in one line; nothing is changed.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx

from designer import plugins
from designer.core.transforms import TransformError, TransformLog, count_nodes

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PluginTransform:
    """A loaded transform plug-in; ``name`` is its entry-point name (the CLI's NAME)."""

    name: str
    title: str
    description: str
    plugin: plugins.Plugin
    impl: Any

    def label(self) -> str:
        return f"{self.title} (plug-in {self.name})"


def _check(plugin: plugins.Plugin) -> PluginTransform:
    impl = plugin.obj() if inspect.isclass(plugin.obj) else plugin.obj
    if not callable(getattr(impl, "run", None)):
        raise plugins.PluginError("has no run(model, base_dir) method")
    title = getattr(impl, "title", plugin.name)
    description = getattr(impl, "description", "")
    if not isinstance(title, str) or not isinstance(description, str):
        raise plugins.PluginError("title and description must be strings")
    return PluginTransform(plugin.name, title or plugin.name, description, plugin, impl)


def transform_plugins() -> list[PluginTransform]:
    """The usable transform plug-ins by name; broken ones are reported and left out."""
    found: list[PluginTransform] = []
    for plugin in plugins.load(plugins.TRANSFORMS):
        transform = plugins.invoke(plugin, "create", _check, plugin)
        if transform is not plugins.FAILED:
            found.append(transform)
    return found


def find_transform(name: str, transforms: list[PluginTransform] | None = None) -> PluginTransform:
    """The plug-in transform called ``name``, or TransformError listing the known names."""
    transforms = transform_plugins() if transforms is None else transforms
    for transform in transforms:
        if transform.name == name:
            return transform
    known = ", ".join(t.name for t in transforms) or "none"
    raise TransformError(f"no transform plug-in named {name!r} (installed: {known})")


def run_transform(
    transform: PluginTransform, model: onnx.ModelProto, base_dir: Path | None
) -> tuple[onnx.ModelProto, TransformLog]:
    """Run the plug-in on a copy of ``model``: the new model and a log of what changed."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    try:
        result = transform.impl.run(copy, base_dir)
    except Exception as exc:
        message = f"transform plug-in {transform.name!r} failed ({type(exc).__name__}: {exc})"
        logger.debug("traceback of %s", message, exc_info=exc)  # the caller shows the message
        raise TransformError(message) from None
    if not isinstance(result, onnx.ModelProto):
        message = (
            f"transform plug-in {transform.name!r} returned {type(result).__name__}, "
            "not an onnx.ModelProto; nothing was changed"
        )
        raise TransformError(message)
    log = TransformLog(transform.title)
    before, after = count_nodes(model), count_nodes(result)
    log.info(f"{transform.label()}: {before:,} node(s) before, {after:,} after")
    log.count("nodes_before", before)
    log.count("nodes_after", after)
    logger.info("ran %s: %d node(s) before, %d after", transform.label(), before, after)
    return result, log
