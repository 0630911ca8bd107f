"""The SQL of tag discovery: what it reads (tags, profiled fields and their sketches, people's
ACCEPTED associations), the ``discover`` stage it records, its stale suggestions, and the seeding
of the built-in tag domain.

Suggestions themselves are written by :func:`catalog_nb.server.store.associations.
record_suggestions`, which keeps people's word (REJECTED stays rejected, ACCEPTED is never
downgraded).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, Literal

from sqlalchemy import Connection, and_, delete, insert, select, update

from catalog_nb.contract import TagAssociationState
from catalog_nb.server.store.associations import DISCOVERY
from catalog_nb.server.store.common import fold, new_key, now_ms
from catalog_nb.server.store.schema import (
    data_resources,
    resource_fields,
    tag_associations,
    tag_domains,
    tags,
)

STAGE = "discover"

_TAG_COLUMNS = (
    tags.c.key, tags.c.name, tags.c.full_name, tags.c.tag_state, tags.c.learning_enabled,
    tags.c.min_score, tags.c.reg_ex, tags.c.regex_min_len, tags.c.regex_max_len,
    tags.c.regex_filter_class, tags.c.external_id, tags.c.external_source_name,
)


def enabled_tags(conn: Connection) -> list[dict[str, Any]]:
    """Every enabled tag with what discovery needs of it, in full-name order."""
    rows = conn.execute(
        select(*_TAG_COLUMNS).where(tags.c.enable.is_(True)).order_by(tags.c.full_name)
    ).mappings()
    return [dict(r) for r in rows]


def accepted_examples(conn: Connection, tag_keys: Collection[str]) -> list[dict[str, Any]]:
    """The fields carrying an ACCEPTED association of these tags, with their sketches.

    Rows: ``tag_key, resource_key, path, name, data_type, sketch``. Associations naming a field
    the resource no longer has are left out (there is nothing to compare).
    """
    if not tag_keys:
        return []
    query = (
        select(
            tag_associations.c.tag_key, resource_fields.c.resource_key, data_resources.c.path,
            resource_fields.c.name, resource_fields.c.data_type, resource_fields.c.sketch,
        )
        .join(resource_fields, and_(
            resource_fields.c.resource_key == tag_associations.c.resource_key,
            resource_fields.c.name == tag_associations.c.field_scope,
        ))
        .join(data_resources, data_resources.c.key == tag_associations.c.resource_key)
        .where(
            tag_associations.c.tag_key.in_(list(tag_keys)),
            tag_associations.c.state == TagAssociationState.ACCEPTED.value,
            tag_associations.c.field_scope != "",
        )
        .order_by(tag_associations.c.tag_key, data_resources.c.path, resource_fields.c.name)
    )
    return [dict(r) for r in conn.execute(query).mappings()]


def source_resources(conn: Connection, source_key: str) -> list[dict[str, Any]]:
    """``key, path, detailed_status, time_of_last_profile`` of every resource of a source."""
    query = select(
        data_resources.c.key, data_resources.c.path, data_resources.c.detailed_status,
        data_resources.c.time_of_last_profile,
    ).where(data_resources.c.data_source_key == source_key).order_by(data_resources.c.path)
    return [dict(r) for r in conn.execute(query).mappings()]


def resources_by_key(conn: Connection, keys: Collection[str]) -> list[dict[str, Any]]:
    """``key, path`` of the resources with these keys, in path order."""
    if not keys:
        return []
    query = select(data_resources.c.key, data_resources.c.path).where(
        data_resources.c.key.in_(list(keys))
    ).order_by(data_resources.c.path)
    return [dict(r) for r in conn.execute(query).mappings()]


def profiled_fields(conn: Connection, resource_key: str) -> list[dict[str, Any]]:
    """``name, data_type, sketch`` of a resource's fields that have a value sketch."""
    query = (
        select(resource_fields.c.name, resource_fields.c.data_type, resource_fields.c.sketch)
        .where(resource_fields.c.resource_key == resource_key,
               resource_fields.c.sketch.is_not(None))
        .order_by(resource_fields.c.position)
    )
    # JSON null may come back as None even where SQL NULL was not stored: filter again.
    return [dict(r) for r in conn.execute(query).mappings() if r["sketch"]]


def discovery_suggestions(conn: Connection, resource_key: str) -> dict[tuple[str, str], str]:
    """``(field, tag key) -> association key`` of the resource's SUGGESTED field associations
    that discovery wrote and nobody touched since (the ones it may withdraw)."""
    query = select(
        tag_associations.c.key, tag_associations.c.field_scope, tag_associations.c.tag_key,
    ).where(
        tag_associations.c.resource_key == resource_key,
        tag_associations.c.field_scope != "",
        tag_associations.c.state == TagAssociationState.SUGGESTED.value,
        tag_associations.c.created_by == DISCOVERY,
        tag_associations.c.changed_by == DISCOVERY,
    )
    return {(str(r.field_scope), str(r.tag_key)): str(r.key) for r in conn.execute(query)}


def withdraw(conn: Connection, keys: Iterable[str]) -> int:
    """Delete discovery's own suggestions that no longer hold; returns how many went."""
    keys = list(keys)
    if not keys:
        return 0
    result = conn.execute(delete(tag_associations).where(
        tag_associations.c.key.in_(keys),
        tag_associations.c.state == TagAssociationState.SUGGESTED.value,
        tag_associations.c.changed_by == DISCOVERY,
    ))
    return int(result.rowcount)


def last_discovered(status: Iterable[dict[str, Any]]) -> int | None:
    """When discovery last ended on a resource, from its ``detailed_status``."""
    for stage in status or []:
        if stage.get("stageName") == STAGE:
            return int(stage.get("endTime") or 0)
    return None


def mark_discovered(
    conn: Connection, resource_key: str, run_id: str | None, started_ms: int,
    error: str | None,
) -> None:
    """Record the ``discover`` stage in the resource's ``detailedStatus`` (same shape as the
    browse and profile stages of ``store.ingest``). A partial error (a tag skipped on a field)
    keeps the status SUCCEEDED and says what was skipped in ``errorMsg``."""
    current = conn.execute(
        select(data_resources.c.detailed_status).where(data_resources.c.key == resource_key)
    ).scalar_one_or_none()
    kept = [d for d in (current or []) if d.get("stageName") != STAGE]
    kept.append({
        "stageName": STAGE, "status": "SUCCEEDED", "errorMsg": error, "runId": run_id,
        "workflowId": None, "startTime": started_ms, "endTime": now_ms(),
        "numberSampledRows": None, "lastPartitionProfile": False,
    })
    kept.sort(key=lambda d: str(d["stageName"]))
    conn.execute(
        update(data_resources).where(data_resources.c.key == resource_key)
        .values(detailed_status=kept)
    )


# ------------------------------------------------------------------------------------ seeding

SeedOutcome = Literal["created", "refreshed", "unchanged"]


def seed_domain(conn: Connection, name: str, description: str) -> dict[str, Any] | None:
    """The immutable built-in domain ``name``, created when missing.

    Returns None when a domain of that name exists that people created (not immutable): the
    built-ins are not poured into someone's own domain.
    """
    row = conn.execute(
        select(tag_domains).where(tag_domains.c.name_fold == fold(name))
    ).mappings().first()
    if row is not None:
        return dict(row) if row["immutable"] else None
    now = now_ms()
    key = new_key()
    conn.execute(insert(tag_domains).values(
        key=key, name=name, name_fold=fold(name), description=description, immutable=True,
        created_ms=now, changed_ms=now,
    ))
    return {"key": key, "name": name}


def seed_tag(
    conn: Connection, domain: dict[str, Any], name: str, code: dict[str, Any],
    tuned: dict[str, Any],
) -> SeedOutcome:
    """Create the root tag ``name`` of a built-in domain, or refresh its code-owned columns.

    ``code`` columns are the release's definition (regex, lengths, sensitivity...): rewritten
    when they differ. ``tuned`` columns (enable, minScore...) are only set on creation, since
    people may have tuned them since.
    """
    row = conn.execute(select(tags).where(
        tags.c.domain_key == domain["key"], tags.c.parent_scope == "",
        tags.c.name_fold == fold(name),
    )).mappings().first()
    if row is None:
        now = now_ms()
        conn.execute(insert(tags).values(
            key=new_key(), domain_key=domain["key"], parent_key=None, parent_scope="",
            name=name, name_fold=fold(name), full_name=f"{domain['name']}.{name}",
            rich_description=None, **code, **tuned, created_ms=now, changed_ms=now,
        ))
        return "created"
    changes = {column: value for column, value in code.items() if row[column] != value}
    if not changes:
        return "unchanged"
    conn.execute(
        update(tags).where(tags.c.key == row["key"]).values(**changes, changed_ms=now_ms())
    )
    return "refreshed"
