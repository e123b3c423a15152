"""The Qt-free core: documents, edits, schema, analysis and transforms.

Never imports PySide6, onnxruntime, tensorrt or paramiko (enforced by ruff's banned-api rule
and by ``tests/core/test_import_boundary.py``).
"""
