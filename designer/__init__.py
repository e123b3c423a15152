"""ONNX Designer: draw, edit, check, transform and profile ONNX models."""

__version__ = "0.1.0"
