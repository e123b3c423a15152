"""Helpers shared by the tests (importable as ``helpers`` thanks to tests/conftest.py)."""
