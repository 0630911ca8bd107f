"""Placeholder: filled in by its owner within this session."""

from __future__ import annotations

__all__ = ["ExportMixin"]


class ExportMixin:
    """Placeholder."""
