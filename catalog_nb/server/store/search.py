"""The search tables: the index documents and facet values of each resource, the queries that
match, rank and count over them, and the stored results of each session.

**The index follows every write.** :func:`refresh` rebuilds the document (its text by column,
``search_documents``) and the derived facet categories (``search_facet_values``) of the named
resources, in the caller's transaction; profiling, people's annotations, tag associations, tag
renames and moves and custom values call it. The engine's own structure over the documents
(FTS5 or ``tsvector``) is kept by the :mod:`~catalog_nb.server.search.index` implementation.
A resource's document holds the names of its first :data:`MAX_INDEXED_FIELDS` fields and of every
field people annotated, so that a resource with hundreds of thousands of fields costs a bounded
refresh (every field still counts in the ``fieldDataType`` facet).

**Visibility first.** Every query here is ANDed with the caller's
:func:`~catalog_nb.server.store.resources.visible_condition`: matches, counts and facet
categories only ever come from resources the caller sees.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Subquery,
    and_,
    case,
    delete,
    func,
    insert,
    literal,
    not_,
    or_,
    select,
    true,
)
from sqlalchemy.sql import FromClause

from catalog_nb.contract import ErrorCode, Sensitivity, TagAssociationState
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.search import facets as F
from catalog_nb.server.search.index import SearchIndex, index_for
from catalog_nb.server.search.query import (
    And,
    Attribute,
    Everything,
    Node,
    Not,
    Or,
    Term,
    normalise,
    positive_terms,
    pure_conjunction,
)
from catalog_nb.server.security import Visibility
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store.common import chunks, new_key, now_ms
from catalog_nb.server.store.resources import specs_condition, visible_condition
from catalog_nb.server.store.schema import (
    custom_properties,
    data_resources,
    data_sources,
    resource_custom_values,
    resource_fields,
    search_documents,
    search_facet_values,
    stored_searches,
    tag_associations,
    tags,
)

R, S, FV, DOC = data_resources, data_sources, search_facet_values, search_documents
_SENSITIVITY_RANK = {s.value: rank for rank, s in enumerate(Sensitivity)}
_INDEXED_STATES = (TagAssociationState.ACCEPTED.value, TagAssociationState.SUGGESTED.value)
#: Fields (by position) whose names a resource's document holds; fields people named, described
#: or commented on count whatever their position. The write that refreshes a document must stay
#: short: a JSON document of 300,000 keys would otherwise spend a second of the write lock here.
MAX_INDEXED_FIELDS = 20_000
#: Stored results kept per session (older ones are dropped when a new one is stored).
KEEP_PER_SESSION = 20


# ----------------------------------------------------------------------------- the index


def refresh(conn: Connection, resource_keys: Iterable[str]) -> None:
    """Rebuild the index document and facet values of these resources (gone ones are dropped)."""
    keys = sorted({k for k in resource_keys if k})
    if not keys:
        return
    index = index_for(conn)
    for chunk in chunks(keys):
        _refresh(conn, index, list(chunk))


def resources_tagged(conn: Connection, tag_keys: Iterable[str]) -> list[str]:
    """The resources that hold an association with any of these tags."""
    wanted = sorted(set(tag_keys))
    if not wanted:
        return []
    A = tag_associations
    query = select(A.c.resource_key).where(A.c.tag_key.in_(wanted)).distinct()
    return [str(k) for k in conn.execute(query).scalars()]


def resources_with_property(conn: Connection, property_key: str) -> list[str]:
    """The resources that hold a value of this custom property."""
    V = resource_custom_values
    query = select(V.c.resource_key).where(V.c.property_key == property_key)
    return [str(k) for k in conn.execute(query).scalars()]


def _category(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [c for v in value for c in _category(v)]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    return [str(value)]


def _refresh(conn: Connection, index: SearchIndex, keys: list[str]) -> None:
    old = [int(i) for i in conn.execute(
        select(DOC.c.doc_id).where(DOC.c.resource_key.in_(keys))).scalars()]
    index.documents_removed(conn, old)
    conn.execute(delete(DOC).where(DOC.c.resource_key.in_(keys)))
    conn.execute(delete(FV).where(FV.c.resource_key.in_(keys)))
    rows = conn.execute(
        select(R.c.key, R.c.name, R.c.path, R.c.description, R.c.rich_description)
        .where(R.c.key.in_(keys))
    ).all()
    if not rows:
        return
    text: dict[str, dict[str, list[str]]] = {
        r.key: {"tags": [], "fields": [], "descriptions": [r.description or "",
                                                          r.rich_description or ""],
                "custom": []}
        for r in rows
    }
    facets: dict[str, set[tuple[str, str]]] = defaultdict(set)
    Fd = resource_fields
    for key, data_type in conn.execute(
        select(Fd.c.resource_key, Fd.c.data_type).where(Fd.c.resource_key.in_(keys)).distinct()
    ):
        facets[key].add(("fieldDataType", str(data_type)))
    annotated = or_(Fd.c.display_name.is_not(None), Fd.c.description.is_not(None),
                    Fd.c.comment.is_not(None))
    for key, name, display, description, comment in conn.execute(
        select(Fd.c.resource_key, Fd.c.name, Fd.c.display_name, Fd.c.description, Fd.c.comment)
        .where(Fd.c.resource_key.in_(keys),
               or_(Fd.c.position < MAX_INDEXED_FIELDS, annotated))
        .order_by(Fd.c.resource_key, Fd.c.position)
    ):
        text[key]["fields"].extend(s for s in (name, display, description, comment) if s)
    A, T = tag_associations, tags
    highest: dict[str, str] = {}
    for key, state, tag_name, full_name, synonyms, sensitivity in conn.execute(
        select(A.c.resource_key, A.c.state, T.c.name, T.c.full_name, T.c.synonyms,
               T.c.sensitivity)
        .join(T, T.c.key == A.c.tag_key)
        .where(A.c.resource_key.in_(keys), A.c.state.in_(_INDEXED_STATES))
    ):
        text[key]["tags"].extend([tag_name, full_name, *(str(s) for s in synonyms or [])])
        facets[key].add(("tag", str(full_name)))
        if state == TagAssociationState.ACCEPTED.value and sensitivity in _SENSITIVITY_RANK:
            now = highest.get(key)
            if now is None or _SENSITIVITY_RANK[sensitivity] > _SENSITIVITY_RANK[now]:
                highest[key] = str(sensitivity)
    V = resource_custom_values
    for key, property_key, value in conn.execute(
        select(V.c.resource_key, V.c.property_key, V.c.value).where(V.c.resource_key.in_(keys))
    ):
        for category in _category(value):
            text[key]["custom"].append(category)
            facets[key].add((F.stored_custom(property_key), category))
    documents: list[dict[str, Any]] = []
    values: list[dict[str, Any]] = []
    for r in rows:
        parts = text[r.key]
        documents.append({
            "resource_key": r.key, "name": normalise(r.name), "path": normalise(r.path),
            **{col: normalise(" ".join(parts[col])) for col in parts},
        })
        facets[r.key].add(("sensitivity", highest.get(r.key, F.NO_SENSITIVITY)))
        values.extend({"resource_key": r.key, "facet": f, "category": c}
                      for f, c in facets[r.key])
    conn.execute(insert(DOC), documents)
    conn.execute(insert(FV), values)
    new = [int(i) for i in conn.execute(
        select(DOC.c.doc_id).where(DOC.c.resource_key.in_(keys))).scalars()]
    index.documents_written(conn, new)


# ------------------------------------------------------------------------------ matching

_ATTRIBUTES: dict[str, Any] = {
    "source": S.c.name_fold, "format": func.lower(R.c.file_format),
    "owner": func.lower(R.c.owner),
    "type": func.replace(R.c.resource_type, F.TYPE_PREFIX, ""),
}


@dataclass
class Matching:
    """How a parsed phrase selects resources: ``condition`` (None: every resource), and the
    relation giving each matched resource its ``score`` (None: no text, score 0)."""

    condition: ColumnElement[bool] | None
    ranked: Subquery | None
    inner: bool = False


def _compile(index: SearchIndex, node: Node) -> ColumnElement[bool]:
    if isinstance(node, Term):
        return R.c.key.in_(index.matches(node))
    if isinstance(node, Attribute):
        return _ATTRIBUTES[node.field] == node.value.casefold()
    if isinstance(node, And):
        return and_(*(_compile(index, i) for i in node.items))
    if isinstance(node, Or):
        return or_(*(_compile(index, i) for i in node.items))
    if isinstance(node, Not):
        inner = _compile(index, node.item)
        if isinstance(node.item, Attribute):
            column = _ATTRIBUTES[node.item.field]
            return or_(column.is_(None), not_(inner))
        return not_(inner)
    return true()


def matching(conn: Connection, node: Node) -> Matching:
    """The condition and ranking of a parsed phrase."""
    if isinstance(node, Everything):
        return Matching(None, None)
    index = index_for(conn)
    pure = pure_conjunction(node)
    if pure is not None:
        ranked = index.ranked(pure, every=True)
        return Matching(R.c.key.in_(select(ranked.c.resource_key)), ranked, inner=True)
    terms = positive_terms(node)
    return Matching(_compile(index, node),
                    index.ranked(terms, every=False) if terms else None)


# -------------------------------------------------------------------------------- facets


@dataclass
class FacetContext:
    """What facet counting needs once per request: the facets in force (built-in and custom),
    the visible virtual folders, and the time the age ranges are measured from."""

    facets: dict[str, F.Facet]
    folders: list[dict[str, Any]] = field(default_factory=list)
    now: int = 0


def facet_context(conn: Connection, vis: Visibility) -> FacetContext:
    """The facets in force for a caller, in their order on the wire."""
    found = {f.name: f for f in F.BUILT_IN}
    cp = custom_properties
    query = select(cp.c.key, cp.c.name, cp.c.display_name).where(cp.c.facet_able.is_(True))
    for key, name, display in conn.execute(query.order_by(cp.c.name_fold)):
        facet = F.custom_facet(key, name, display)
        found[facet.name] = facet
    return FacetContext(found, folder_store.list_folders(conn, vis), now_ms())


def _expression(ctx: FacetContext, facet: F.Facet) -> Any:
    if facet.name == "dataSource":
        return S.c.name
    if facet.name == "resourceType":
        return func.replace(R.c.resource_type, F.TYPE_PREFIX, "")
    if facet.name == "fileFormat":
        return func.lower(R.c.file_format)
    if facet.name == "owner":
        return R.c.owner
    if facet.name == "sizeRange":
        size = R.c.resource_size
        return case(
            (size.is_(None), F.UNKNOWN),
            *((size < bound, category) for category, bound in F.SIZE_RANGES),
            else_=F.SIZE_ABOVE,
        )
    if facet.name == "lastModified":
        changed = R.c.time_of_resource_change
        return case(
            (changed.is_(None), F.UNKNOWN),
            *((changed >= ctx.now - age, category) for category, age in F.AGE_RANGES),
            else_=F.AGE_ABOVE,
        )
    raise ValueError(f"no expression for facet {facet.name!r}")


def _folder_condition(conn: Connection, folder: Mapping[str, Any]) -> ColumnElement[bool]:
    return specs_condition(conn, folder_store.specs_of(folder))


def selection_condition(
    conn: Connection, ctx: FacetContext, facet: F.Facet, categories: Sequence[str]
) -> ColumnElement[bool]:
    """Resources in any of these categories of the facet."""
    if facet.kind == "derived":
        # EXISTS, not IN: a category most resources hold (a common field data type) is then
        # one primary-key probe per candidate instead of a temporary set of every holder.
        held = FV.alias()
        return (
            select(held.c.resource_key)
            .where(held.c.resource_key == R.c.key, held.c.facet == facet.stored,
                   held.c.category.in_(list(categories)))
            .correlate(R)
            .exists()
        )
    if facet.kind == "folder":
        chosen = [f for f in ctx.folders if f["name"] in set(categories)]
        return or_(*(_folder_condition(conn, f) for f in chosen)) if chosen else literal(False)
    return _expression(ctx, facet).in_(list(categories))


def _joined() -> FromClause:
    return R.join(S, S.c.key == R.c.data_source_key)


def count_categories(
    conn: Connection, ctx: FacetContext, facet: F.Facet, where: Sequence[ColumnElement[bool]]
) -> dict[str, int]:
    """How many resources matched by ``where`` fall in each category of the facet (only
    categories with at least one)."""
    if facet.kind == "derived":
        query = (
            select(FV.c.category, func.count())
            .select_from(_joined().join(FV, FV.c.resource_key == R.c.key))
            .where(*where, FV.c.facet == facet.stored)
            .group_by(FV.c.category)
        )
        return {str(c): int(n) for c, n in conn.execute(query)}
    if facet.kind == "folder":
        counts = {}
        for folder in ctx.folders:
            query = select(func.count()).select_from(_joined()).where(
                *where, _folder_condition(conn, folder))
            n = int(conn.execute(query).scalar_one())
            if n:
                counts[str(folder["name"])] = n
        return counts
    inner = (
        select(_expression(ctx, facet).label("category"))
        .select_from(_joined()).where(*where).subquery()
    )
    query = (
        select(inner.c.category, func.count())
        .where(inner.c.category.is_not(None))
        .group_by(inner.c.category)
    )
    return {str(c): int(n) for c, n in conn.execute(query)}


def count_matching(conn: Connection, where: Sequence[ColumnElement[bool]]) -> int:
    """How many resources ``where`` matches."""
    query = select(func.count()).select_from(_joined()).where(*where)
    return int(conn.execute(query).scalar_one())


def ordered(categories: Mapping[str, int], facet: F.Facet) -> dict[str, int]:
    """Categories in their display order: a fixed facet's own order, else most resources
    first, then by name."""
    if facet.fixed is not None:
        fixed = {c: categories[c] for c in facet.fixed if c in categories}
        rest = {c: n for c, n in sorted(categories.items()) if c not in fixed}
        return {**fixed, **rest}
    return dict(sorted(categories.items(), key=lambda item: (-item[1], item[0])))


def check_selections(
    conn: Connection, vis: Visibility, ctx: FacetContext, selections: Mapping[str, list[str]]
) -> None:
    """400 ``INVALID_FACET`` for an unknown facet, or a category the facet does not have among
    the resources the caller sees (hidden and unknown categories answer alike)."""
    for name, categories in selections.items():
        facet = ctx.facets.get(name)
        if facet is None:
            known = ", ".join(ctx.facets)
            raise BadRequest(f"There is no facet named '{name}'; the facets are {known}.",
                             ErrorCode.INVALID_FACET, field="facetSelections")
        allowed: Iterable[str] = facet.fixed or ()
        missing = [c for c in categories if c not in set(allowed)]
        if missing:
            known_here = count_categories(conn, ctx, facet, [visible_condition(conn, vis)])
            missing = [c for c in missing if c not in known_here]
        if missing:
            listed = ", ".join(repr(m) for m in missing[:10])
            raise BadRequest(
                f"The facet '{name}' has no category {listed}; GET /search/facets lists them.",
                ErrorCode.INVALID_FACET, field="facetSelections", unknown=missing,
            )


# ------------------------------------------------------------------------------ searching

_SORTS: dict[str, Any] = {
    "name": R.c.name, "resourcePath": R.c.path, "dataSourceName": S.c.name,
    "resourceSize": R.c.resource_size, "rowCount": R.c.row_count,
    "timeOfResourceChange": R.c.time_of_resource_change,
    "timeOfLastProfile": R.c.time_of_last_profile,
}
SORT_PROPERTIES = ("score", *_SORTS)


@dataclass
class Plan:
    """A checked search: the parsed phrase, the facet selections (by facet name, non-empty),
    and the sort specs ((property, ascending), ...)."""

    node: Node
    selections: dict[str, list[str]]
    sort: list[tuple[str, bool]]


def _order_by(conn: Connection, plan: Plan, score: Any) -> list[Any]:
    postgres = conn.dialect.name == "postgresql"

    def text_order(column: Any) -> Any:
        return column.collate("C") if postgres else column

    specs = list(plan.sort)
    if not specs:
        specs = [("name", True)] if isinstance(plan.node, Everything) else [("score", False)]
    order: list[Any] = []
    for prop, ascending in specs:
        column = score if prop == "score" else _SORTS[prop]
        if prop in ("name", "resourcePath", "dataSourceName"):
            column = text_order(column)
        order.append((column.asc() if ascending else column.desc()).nulls_last())
    return [*order, text_order(R.c.name).asc(), R.c.key.asc()]


@dataclass
class Outcome:
    """A search's every match in order, as [key, score], and its facet results."""

    matches: list[list[Any]]
    facet_results: list[dict[str, Any]]


def search(conn: Connection, vis: Visibility, ctx: FacetContext, plan: Plan) -> Outcome:
    """Run a checked search for a caller: the ordered matches and every facet's counts."""
    visible = visible_condition(conn, vis)
    match = matching(conn, plan.node)
    base = [visible] + ([match.condition] if match.condition is not None else [])
    chosen = {name: selection_condition(conn, ctx, ctx.facets[name], cats)
              for name, cats in plan.selections.items()}
    source: FromClause = _joined()
    score: Any = literal(0.0)
    where = list(base)
    if match.ranked is not None:
        ranked = match.ranked
        if match.inner:
            source = source.join(ranked, ranked.c.resource_key == R.c.key)
            where = [visible]
            score = ranked.c.score
        else:
            source = source.outerjoin(ranked, ranked.c.resource_key == R.c.key)
            score = func.coalesce(ranked.c.score, 0.0)
    query = (
        select(R.c.key, score.label("score")).select_from(source)
        .where(*where, *chosen.values())
        .order_by(*_order_by(conn, plan, score))
    )
    matches = [[str(k), float(s or 0.0)] for k, s in conn.execute(query)]
    results = []
    totals: dict[frozenset[str], int] = {frozenset(chosen): len(matches)}
    for name, facet in ctx.facets.items():
        others = frozenset(n for n in chosen if n != name)
        facet_where = [*base, *(chosen[n] for n in others)]
        if others not in totals:
            totals[others] = count_matching(conn, facet_where)
        counts = count_categories(conn, ctx, facet, facet_where)
        results.append({
            "name": name, "displayName": facet.display_name, "totalCount": totals[others],
            "categoryCounts": ordered(counts, facet),
            "selectedCategories": list(plan.selections.get(name, [])),
        })
    return Outcome(matches, results)


def facet_catalogue(conn: Connection, vis: Visibility, ctx: FacetContext) -> list[dict[str, Any]]:
    """Every facet with the categories that hold at least one visible resource."""
    visible = [visible_condition(conn, vis)]
    return [
        {"facetName": name, "displayName": facet.display_name,
         "facetCategories": list(ordered(count_categories(conn, ctx, facet, visible), facet))}
        for name, facet in ctx.facets.items()
    ]


def visible_rows(conn: Connection, vis: Visibility, keys: Sequence[str]) -> dict[str, Any]:
    """The rows (with their source) of those of ``keys`` the caller still sees, by key."""
    if not keys:
        return {}
    query = (
        select(R, S.c.name.label("source_name"), S.c.source_type.label("source_type"),
               S.c.uri.label("source_uri"))
        .join(S, S.c.key == R.c.data_source_key)
        .where(R.c.key.in_(list(keys)), visible_condition(conn, vis))
    )
    result = conn.execute(query)
    names = list(result.keys())
    return {row[0]: dict(zip(names, row, strict=True)) for row in result}


# ------------------------------------------------------------------------ stored results


def _session(token: str) -> str:
    """The stored form of a session token (as ``store.sessions`` keeps it)."""
    return hashlib.sha256(token.encode()).hexdigest()


def save(
    conn: Connection, token: str, criteria: Mapping[str, Any], summary: Mapping[str, Any],
    matches: list[list[Any]],
) -> str:
    """Store a result for the session; returns its key. Only the latest results are kept."""
    key, session, now = new_key(), _session(token), now_ms()
    conn.execute(insert(stored_searches).values(
        key=key, token_hash=session, criteria=dict(criteria), summary=dict(summary),
        ordered=matches, created_ms=now,
    ))
    X = stored_searches
    kept = select(X.c.key).where(X.c.token_hash == session).order_by(
        X.c.created_ms.desc(), X.c.key.desc()).limit(KEEP_PER_SESSION)
    conn.execute(delete(X).where(X.c.token_hash == session, X.c.key.not_in(
        select(kept.subquery().c.key))))
    return key


def load(conn: Connection, token: str, key: str | None) -> dict[str, Any]:
    """The session's stored result named ``key``, or its latest; 400 ``NO_SEARCH`` / 404."""
    X = stored_searches
    query = select(X).where(X.c.token_hash == _session(token))
    if key is None:
        row = conn.execute(
            query.order_by(X.c.created_ms.desc(), X.c.key.desc()).limit(1)
        ).mappings().first()
        if row is None:
            raise BadRequest(
                "There is no search to page through; start one with POST /search/new "
                "(or /search/runFacet).", ErrorCode.NO_SEARCH,
            )
        return dict(row)
    row = conn.execute(query.where(X.c.key == key)).mappings().first()
    if row is None:
        raise NotFound(f"There is no search with key '{key}' in your session.",
                       ErrorCode.SEARCH_NOT_FOUND)
    return dict(row)
