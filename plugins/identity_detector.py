"""Example expert-system detector plug-in: Identity nodes that still run.

Exporters leave Identity nodes behind (TorchScript: one per weight alias); each costs a node
launch and a copy. Install it in one of two ways:

- as a file: ``onnx-designer report PROFILE --detectors plugins/identity_detector.py``;
- as a package, with an entry point in its ``pyproject.toml``::

      [project.entry-points."onnx_designer.detectors"]
      identity = "identity_detector:IdentityNodes"

A detector subclasses ``Detector``, sets ``id`` and ``title`` and returns ``Finding``s from
``detect(context)``; ``context.stats.nodes`` holds each node's times over the iteration
range, ``context.model`` the ONNX model when one was given.
"""

from __future__ import annotations

from designer.activities.analysis.detectors import Context, Detector, Finding


class IdentityNodes(Detector):
    id = "identity-nodes"
    title = "Identity nodes that run"

    def detect(self, context: Context) -> list[Finding]:
        items = [t for t in context.stats.nodes if t.node.op_type == "Identity"]
        if not items:
            return []
        us = sum(t.per_iteration_us for t in items)
        return [
            Finding(
                self.id,
                "low",
                f"{len(items)} Identity node(s) run, {us:,.1f} µs per iteration",
                "Remove them with Tools > Global Model Modification > Sanitize Graph (or "
                "onnx-designer sanitize IN OUT), or let ONNX Runtime's graph optimizations "
                "drop them",
                tuple(n for t in items for n in (t.node.onnx_nodes or (t.node.name,))),
                *context.gain(us),
            )
        ]
