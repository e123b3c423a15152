"""Analysis: the type checker and its diagnostics."""

from designer.core.analysis.checker import CheckResult, check_document, scope_title
from designer.core.analysis.diagnostics import Diagnostic, Severity

__all__ = ["CheckResult", "Diagnostic", "Severity", "check_document", "scope_title"]
