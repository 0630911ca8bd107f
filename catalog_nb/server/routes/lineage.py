"""Routes of /lineage (filled in by its owner; see the docs)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["lineage"])
