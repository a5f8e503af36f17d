"""Conceptual figures (placeholder: filled in by the lessons that use them)."""

from __future__ import annotations

__all__: list[str] = []
