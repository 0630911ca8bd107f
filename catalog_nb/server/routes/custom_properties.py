"""custom_properties routes (being built)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["custom_properties"])
