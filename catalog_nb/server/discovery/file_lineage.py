"""Placeholder replaced by its owner within this session (see docs/relations-api.md)."""

from __future__ import annotations

from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store


def infer(store: Store, settings: Settings) -> StepReport:
    return StepReport()
