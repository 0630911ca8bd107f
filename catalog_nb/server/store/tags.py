"""Tags: CRUD, the tag tree of each domain, dotted full names, moves (domains: tag_domains).

A tag's ``full_name`` is ``Domain.Parent.Child``. It is stored (reads, search and discovery need
no walk up the tree) and rewritten for a whole subtree when a tag is renamed or moved, or its
domain renamed. Names are unique among siblings case-insensitively: the constraint
``uq_tag_sibling`` decides, so two requests racing to create the same name cannot both win.
Names hold no ``.``, so full names are unique too.

Every tag write first locks the rows of the domains it touches, in key order (PostgreSQL;
SQLite serialises writers anyway). A child created while its parent is renamed or moved, or a tag
created while its domain is deleted, waits for the other and then reads what it committed, so a
full name never goes stale.

Built-in rows (``immutable``) refuse every change but the tunable settings (409 ``IMMUTABLE``).
Permission checks stay with the caller: writes take ``allow``, called with each domain they
touch, after the references are resolved and before anything is written.
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from sqlalchemy import Connection, Select, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from catalog_nb.contract import ErrorCode, TagAssociationState, TagState
from catalog_nb.server.errors import BadRequest, Conflict, NotFound
from catalog_nb.server.store import search
from catalog_nb.server.store.common import code_points, fold, new_key, now_ms
from catalog_nb.server.store.schema import data_resources, tag_associations, tag_domains, tags
from catalog_nb.server.store.tag_domains import (
    domain_by_name,
    get_domain,
    immutable,
    lock_domains,
    write_full_names,
)
from catalog_nb.server.store.visible import visible_condition
from catalog_nb.server.visibility import Visibility

D, T, A = tag_domains, tags, tag_associations

#: Called with each domain row a write touches; raises to refuse (see security.require_domain).
Allow = Callable[[Mapping[str, Any]], None]

#: Tag columns people write (store names); key, domain, parent and full name are handled apart.
TAG_COLUMNS = (
    "name", "description", "rich_description", "tag_state", "state", "enable",
    "learning_enabled", "min_score", "reg_ex", "regex_min_len", "regex_max_len",
    "regex_filter_class", "synonyms", "sensitivity", "external_id", "external_source_name",
)
#: What may still be tuned on a built-in (immutable) tag.
TUNABLE = frozenset({"enable", "min_score", "learning_enabled", "synonyms"})
#: Wire names of the store columns, for messages.
WIRE = {
    "name": "name", "description": "description", "rich_description": "richDescription",
    "tag_state": "tagState", "state": "state", "enable": "enable",
    "learning_enabled": "learningEnabled", "min_score": "minScore", "reg_ex": "regEx",
    "regex_min_len": "regexMinLen", "regex_max_len": "regexMaxLen",
    "regex_filter_class": "regexFilterClass", "synonyms": "synonyms",
    "sensitivity": "sensitivity", "external_id": "externalId",
    "external_source_name": "externalSourceName",
}
_DEFAULTS: dict[str, Any] = {
    "tag_state": TagState.VALUE.value, "state": TagAssociationState.ACCEPTED.value,
    "enable": True, "learning_enabled": False, "synonyms": [],
}


def _allow_all(_: Mapping[str, Any]) -> None:
    return None


def _clean(row: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in row.items() if k not in ("name_fold", "parent_scope")}


# ------------------------------------------------------------------------- regular expressions


@cache
def regex_engine() -> Any:
    """The third-party ``regex`` module when installed (discovery matches with it), else ``re``."""
    try:
        return importlib.import_module("regex")
    except ImportError:
        return re


def check_pattern(pattern: str) -> None:
    """400 ``INVALID_REGEX`` with the compiler's own words when ``pattern`` does not compile."""
    try:
        regex_engine().compile(pattern)
    except Exception as exc:  # re.error, regex.error, OverflowError, ...
        raise BadRequest(
            f"regEx is not a valid regular expression: {exc}.",
            ErrorCode.INVALID_REGEX, field="regEx", error=str(exc),
        ) from exc


# -------------------------------------------------------------------------------- tag reads


def _tags() -> Select[Any]:
    return select(T, D.c.name.label("domain_name")).join(D, D.c.key == T.c.domain_key)


def _ordered(conn: Connection, query: Select[Any]) -> Select[Any]:
    column = code_points(conn, T.c.full_name)
    return query.order_by(column, T.c.key)


def _find(conn: Connection, key: str) -> dict[str, Any] | None:
    row = conn.execute(_tags().where(T.c.key == key)).mappings().first()
    return _clean(row) if row else None


def get_tag(conn: Connection, key: str) -> dict[str, Any]:
    """The tag with this key (with ``domain_name``); else 404."""
    found = _find(conn, key)
    if found is None:
        raise NotFound(f"There is no tag with key '{key}'.", ErrorCode.TAG_NOT_FOUND)
    return found


def tags_by_key(conn: Connection, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The tags with these keys, by key (unknown ones left out)."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    rows = conn.execute(_tags().where(T.c.key.in_(wanted))).mappings()
    return {r["key"]: _clean(r) for r in rows}


def list_tags(conn: Connection, domain_key: str | None = None) -> list[dict[str, Any]]:
    """Every tag (of one domain: 404 when it does not exist), by full name."""
    query = _tags()
    if domain_key is not None:
        get_domain(conn, domain_key)
        query = query.where(T.c.domain_key == domain_key)
    return [_clean(r) for r in conn.execute(_ordered(conn, query)).mappings()]


def children_of(conn: Connection, keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The direct children of many tags in one query, by parent key, by full name."""
    wanted = sorted(set(keys))
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if wanted:
        query = _ordered(conn, _tags().where(T.c.parent_key.in_(wanted)))
        for row in conn.execute(query).mappings():
            found[row["parent_key"]].append(_clean(row))
    return found


def by_name(conn: Connection, tag_name: str, domain_name: str | None) -> dict[str, Any]:
    """The tag named ``tag_name`` (a name, or a full name with or without the domain).

    A bare name found in several places of the tree is 400 listing their full names.
    """
    domain = domain_by_name(conn, domain_name) if domain_name else None
    wanted = tag_name.strip()
    query = _tags().where(T.c.name_fold == fold(wanted.rsplit(".", 1)[-1].strip()))
    if domain is not None:
        query = query.where(T.c.domain_key == domain["key"])
    rows = [_clean(r) for r in conn.execute(_ordered(conn, query)).mappings()]
    full = {fold(wanted)} | ({fold(f"{domain['name']}.{wanted}")} if domain else set())
    exact = [r for r in rows if fold(r["full_name"]) in full]
    if exact:
        return exact[0]
    if "." not in wanted and len(rows) == 1:
        return rows[0]
    if "." not in wanted and rows:
        raise BadRequest(
            f"The tag name '{wanted}' is ambiguous: it names "
            f"{', '.join(r['full_name'] for r in rows)}; give the full name or the domain.",
            ErrorCode.INVALID_PARAMETER, candidates=[r["full_name"] for r in rows],
        )
    where = f" in the tag domain '{domain['name']}'" if domain else ""
    raise NotFound(f"There is no tag named '{tag_name}'{where}.", ErrorCode.TAG_NOT_FOUND)


def association_counts(
    conn: Connection, vis: Visibility, keys: Sequence[str] | None = None
) -> dict[str, int]:
    """How many associations each tag has on resources the caller sees (all tags: ``None``)."""
    query = (
        select(A.c.tag_key, func.count())
        .join(data_resources, data_resources.c.key == A.c.resource_key)
        .where(visible_condition(conn, vis))
        .group_by(A.c.tag_key)
    )
    if keys is not None:
        if not keys:
            return {}
        query = query.where(A.c.tag_key.in_(sorted(set(keys))))
    return {k: int(n) for k, n in conn.execute(query)}


# ------------------------------------------------------------------------------- tag writes


def _referenced_tag(conn: Connection, key: str) -> dict[str, Any]:
    found = _find(conn, key)
    if found is None:
        raise BadRequest(f"parentKey names a tag that does not exist: '{key}'.",
                         ErrorCode.UNKNOWN_REFERENCE, field="parentKey", unknown=[key])
    return found


def _check_tag(row: Mapping[str, Any], changed: Iterable[str]) -> None:
    """The rules a tag's merged values obey (names and enums are checked by the schema).

    The pattern is compiled only when it is written: a stored one stays as it is when other
    properties change.
    """
    if row.get("tag_state") == TagState.REGEX.value and not row.get("reg_ex"):
        raise BadRequest("A REGEX tag needs regEx, the regular expression discovery matches.",
                         ErrorCode.INVALID_PAYLOAD, field="regEx")
    if row.get("reg_ex") and "reg_ex" in changed:
        check_pattern(str(row["reg_ex"]))
    low, high = row.get("regex_min_len"), row.get("regex_max_len")
    if low is not None and high is not None and low > high:
        raise BadRequest(f"regexMinLen ({low}) is larger than regexMaxLen ({high}).",
                         ErrorCode.INVALID_PAYLOAD, field="regexMinLen")


def _duplicate(full_name: str) -> Conflict:
    return Conflict(
        f"The tag '{full_name}' already exists (names are unique among siblings, compared "
        "case-insensitively).", ErrorCode.DUPLICATE_NAME,
    )


def _subtree(conn: Connection, key: str, domain_key: str) -> list[tuple[str, str, str]]:
    """(key, parent key, name) of every tag below ``key``, parents before children."""
    below: dict[str, list[tuple[str, str]]] = defaultdict(list)
    query = select(T.c.key, T.c.parent_key, T.c.name).where(T.c.domain_key == domain_key)
    for child, parent, name in conn.execute(query):
        if parent is not None:
            below[parent].append((child, name))
    found: list[tuple[str, str, str]] = []
    queue = [key]
    while queue:
        parent = queue.pop(0)
        for child, name in below.get(parent, []):
            found.append((child, parent, name))
            queue.append(child)
    return found


def create_tag(
    conn: Connection, values: Mapping[str, Any], allow: Allow = _allow_all, *,
    immutable: bool = False,
) -> dict[str, Any]:
    """Create a tag from store-named values (``domain_key`` and/or ``parent_key`` say where)."""
    domain_key = values.get("domain_key")
    parent_key = values.get("parent_key")
    if parent_key:
        parent = _referenced_tag(conn, parent_key)
        if domain_key and domain_key != parent["domain_key"]:
            raise BadRequest(
                f"parentKey names a tag of the domain '{parent['domain_name']}', not of "
                f"domainKey '{domain_key}'.", ErrorCode.INVALID_PAYLOAD, field="parentKey",
            )
        domain_key = parent["domain_key"]
    if not domain_key:
        raise BadRequest("A tag needs a domainKey (or a parentKey).", ErrorCode.INVALID_PAYLOAD,
                         field="domainKey")
    domain = lock_domains(conn, [domain_key])[domain_key]
    allow(domain)
    base = domain["name"]
    if parent_key:
        parent = _referenced_tag(conn, parent_key)  # read again, now that the domain is held
        if parent["domain_key"] != domain_key:
            raise Conflict("The parent tag moved to another domain meanwhile; try again.",
                           ErrorCode.CONCURRENT_CHANGE)
        base = parent["full_name"]
    row = {**_DEFAULTS, **{k: values[k] for k in TAG_COLUMNS if k in values}}
    _check_tag(row, row)
    now, key, name = now_ms(), new_key(), str(row["name"])
    full_name = f"{base}.{name}"
    try:
        conn.execute(insert(T).values(
            **row, key=key, domain_key=domain_key, parent_key=parent_key or None,
            parent_scope=parent_key or "", name_fold=fold(name), full_name=full_name,
            immutable=immutable, created_ms=now, changed_ms=now,
        ))
    except IntegrityError as exc:
        raise _duplicate(full_name) from exc
    return get_tag(conn, key)


def update_tag(
    conn: Connection, key: str, values: Mapping[str, Any], allow: Allow = _allow_all
) -> dict[str, Any]:
    """Change the given columns of a tag; ``parent_key``/``domain_key`` move it with its subtree.

    Moving to another domain without a ``parent_key`` puts the tag at that domain's root.
    """
    first = get_tag(conn, key)
    target_domain, new_parent = _destination(conn, first, values)
    held, current = _held_for_change(conn, key, first, target_domain, allow)
    changed = {k: values[k] for k in TAG_COLUMNS if k in values and values[k] != current[k]}
    moves = new_parent != current["parent_key"] or target_domain != current["domain_key"]
    _check_changeable(current, changed, moves)
    merged = {**current, **changed}
    _check_tag(merged, changed)
    subtree = _subtree(conn, key, current["domain_key"])
    base = _new_base(conn, key, current, subtree, new_parent, target_domain,
                     held[target_domain]["name"])
    full_name = f"{base}.{merged['name']}"
    if not changed and not moves:
        return current
    row = {**changed, "changed_ms": now_ms()}
    if "name" in changed:
        row["name_fold"] = fold(str(changed["name"]))
    row.update(domain_key=target_domain, parent_key=new_parent, parent_scope=new_parent or "",
               full_name=full_name)
    try:
        conn.execute(update(T).where(T.c.key == key).values(**row))
    except IntegrityError as exc:
        raise _duplicate(full_name) from exc
    renamed = [key]
    if full_name != current["full_name"] or moves:
        renamed += _rename_subtree(conn, key, full_name, subtree, target_domain)
    search.refresh(conn, search.resources_tagged(conn, renamed))
    return get_tag(conn, key)


def _destination(
    conn: Connection, first: Mapping[str, Any], values: Mapping[str, Any]
) -> tuple[str, str | None]:
    """Where the change puts the tag: (domain key, parent key), from the tag as first read.

    A sent parent decides the domain (400 when a sent domain disagrees); a new domain without a
    parent means that domain's root."""
    target_domain = values.get("domain_key") or first["domain_key"]
    new_parent = values["parent_key"] if "parent_key" in values else first["parent_key"]
    if values.get("parent_key"):
        parent = _referenced_tag(conn, values["parent_key"])
        if values.get("domain_key") and values["domain_key"] != parent["domain_key"]:
            raise BadRequest(
                f"parentKey names a tag of the domain '{parent['domain_name']}', not of "
                f"domainKey '{values['domain_key']}'.", ErrorCode.INVALID_PAYLOAD,
                field="parentKey",
            )
        target_domain = parent["domain_key"]
    elif target_domain != first["domain_key"] and "parent_key" not in values:
        new_parent = None
    return target_domain, new_parent


def _held_for_change(
    conn: Connection, key: str, first: Mapping[str, Any], target_domain: str, allow: Allow
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Lock the tag's domain and the one it goes to, and read the tag again under the locks:
    (the locked domains by key, the tag). 409 when it moved meanwhile; ``allow`` may refuse
    either domain."""
    held = lock_domains(conn, {first["domain_key"], target_domain})
    current = get_tag(conn, key)  # read again, now that its domain is held
    if current["domain_key"] != first["domain_key"]:
        raise Conflict("The tag moved to another domain meanwhile; try again.",
                       ErrorCode.CONCURRENT_CHANGE)
    for domain in held.values():
        allow(domain)
    return held, current


def _check_changeable(current: Mapping[str, Any], changed: Mapping[str, Any], moves: bool) -> None:
    """409 when a built-in tag would change more than its tunable columns, or move."""
    if not current["immutable"]:
        return
    refused = [WIRE[k] for k in changed if k not in TUNABLE]
    refused += ["parentKey/domainKey"] if moves else []
    if refused:
        raise immutable("tag", current["full_name"], refused,
                        " (only enable, minScore, learningEnabled and synonyms can)")


def _new_base(
    conn: Connection, key: str, current: Mapping[str, Any],
    subtree: Sequence[tuple[str, str, str]], new_parent: str | None, target_domain: str,
    domain_name: str,
) -> str:
    """What the tag's full name starts with where it goes: its new parent's full name, or the
    domain's name at the root. 400 when the parent lies in the tag's own subtree, 409 when the
    parent moved to another domain meanwhile."""
    if not new_parent:
        return domain_name
    parent = _referenced_tag(conn, new_parent)  # read again, now that its domain is held
    if new_parent == key or new_parent in {k for k, _, _ in subtree}:
        raise BadRequest(
            f"parentKey would put the tag '{current['full_name']}' under itself "
            f"('{parent['full_name']}'); choose a tag that is not below it.",
            ErrorCode.TAG_CYCLE, field="parentKey",
        )
    if parent["domain_key"] != target_domain:
        raise Conflict("The parent tag moved to another domain meanwhile; try again.",
                       ErrorCode.CONCURRENT_CHANGE)
    return str(parent["full_name"])


def _rename_subtree(
    conn: Connection, key: str, full_name: str, subtree: Sequence[tuple[str, str, str]],
    target_domain: str,
) -> list[str]:
    """Write the full names (and domain) of the tags below a renamed or moved tag; their keys.
    ``subtree`` lists ``(key, parent key, name)`` parents first."""
    names = {key: full_name}
    rewritten = []
    for child, parent_key, name in subtree:
        names[child] = f"{names[parent_key]}.{name}"
        rewritten.append({"b_key": child, "b_full": names[child], "b_domain": target_domain})
    write_full_names(conn, rewritten)
    return [child for child, _, _ in subtree]


def delete_tag(
    conn: Connection, key: str, allow: Allow = _allow_all
) -> tuple[dict[str, Any], int]:
    """Delete a tag with its associations (how many: the second value); 409 with children."""
    first = get_tag(conn, key)
    domain = lock_domains(conn, [first["domain_key"]])[first["domain_key"]]
    current = get_tag(conn, key)
    allow(domain)
    if current["immutable"]:
        raise Conflict(f"The tag '{current['full_name']}' is built in and cannot be deleted.",
                       ErrorCode.IMMUTABLE)
    children = [c["name"] for c in children_of(conn, [key]).get(key, [])]
    if children:
        raise Conflict(
            f"The tag '{current['full_name']}' has child tags ({', '.join(children[:10])}); "
            "delete or move them first.", ErrorCode.TAG_HAS_CHILDREN, children=children,
        )
    tagged = search.resources_tagged(conn, [key])
    removed = conn.execute(delete(A).where(A.c.tag_key == key)).rowcount
    conn.execute(delete(T).where(T.c.key == key))
    search.refresh(conn, tagged)
    return current, int(removed or 0)
