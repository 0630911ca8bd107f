"""The search tables: the index documents and facet values of each resource, the queries that
match, rank and count over them, and the stored results of each session.

**The index follows every write.** :func:`refresh` rebuilds the document (its text by column,
``search_documents``), the derived facet categories (``search_facet_values``: tags and custom
values) and the facet columns of the resource row (field data types as a bit mask, sensitivity)
of the named resources, in the caller's transaction; profiling, people's annotations, tag
associations, tag renames and moves and custom values call it. The engine's own structure over
the documents (FTS5 or ``tsvector``) is kept by the :mod:`~catalog_nb.server.search.index`
implementation.
A resource's document holds the names of its first :data:`MAX_INDEXED_FIELDS` fields and of every
field people annotated, so that a resource with hundreds of thousands of fields costs a bounded
refresh (every field still counts in the ``fieldDataType`` facet).

**Visibility first.** Every query here is ANDed with the caller's
:func:`~catalog_nb.server.store.visible.visible_condition`: matches, counts and facet
categories only ever come from resources the caller sees.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import (
    JSON,
    Column,
    ColumnElement,
    Connection,
    Subquery,
    Text,
    and_,
    bindparam,
    cast,
    delete,
    func,
    insert,
    literal,
    not_,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.sql import FromClause

from catalog_nb.contract import ErrorCode, Sensitivity, TagAssociationState
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.search import facets as search_facets
from catalog_nb.server.search.engines import index_for
from catalog_nb.server.search.index import SearchIndex
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
from catalog_nb.server.store import bulk_insert, facet_cells
from catalog_nb.server.store.common import any_key, chunks, code_points, loads_many, new_key, now_ms
from catalog_nb.server.store.facets import (
    FacetContext,
    Ranking,
    facet_results,
    joined,
    ordered,
    search_pass,
    selection_condition,
)
from catalog_nb.server.store.facets import facet_catalogue as counted_catalogue
from catalog_nb.server.store.schema import (
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
from catalog_nb.server.store.visible import visible_condition
from catalog_nb.server.visibility import Visibility

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


def field_type_bits(data_types: Iterable[str]) -> int:
    """The ``facet_field_types`` of a resource whose fields have these data types."""
    bits = 0
    for data_type in data_types:
        bits |= search_facets.FIELD_TYPE_BITS.get(data_type, 0)
    return bits


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
    facet_cells.lock_resources(conn, keys)
    old = [int(i) for i in conn.execute(
        select(DOC.c.doc_id).where(any_key(conn, DOC.c.resource_key, keys))).scalars()]
    index.documents_removed(conn, old)
    facet_cells.drop_documents(conn, old)
    conn.execute(delete(DOC).where(any_key(conn, DOC.c.resource_key, keys)))
    conn.execute(delete(FV).where(any_key(conn, FV.c.resource_key, keys)))
    rows = conn.execute(
        select(R.c.key, R.c.name, R.c.path, R.c.description, R.c.rich_description,
               R.c.facet_field_types, R.c.facet_sensitivity, R.c.data_source_key,
               R.c.resource_type, R.c.file_format, R.c.owner, R.c.resource_size,
               R.c.time_of_resource_change)
        .where(any_key(conn, R.c.key, keys))
    ).all()
    if not rows:
        facet_cells.update(conn, keys, {})
        return
    text: dict[str, dict[str, list[str]]] = {
        r.key: {"tags": [], "fields": [], "descriptions": [r.description or "",
                                                          r.rich_description or ""],
                "custom": []}
        for r in rows
    }
    facets: dict[str, set[tuple[str, str]]] = defaultdict(set)
    field_types: dict[str, int] = defaultdict(int)
    Fd = resource_fields
    for key, data_type in conn.execute(
        select(Fd.c.resource_key, Fd.c.data_type)
        .where(any_key(conn, Fd.c.resource_key, keys)).distinct()
    ):
        field_types[key] |= field_type_bits([str(data_type)])
    annotated = or_(Fd.c.display_name.is_not(None), Fd.c.description.is_not(None),
                    Fd.c.comment.is_not(None))
    for key, name, display, description, comment in conn.execute(
        select(Fd.c.resource_key, Fd.c.name, Fd.c.display_name, Fd.c.description, Fd.c.comment)
        .where(any_key(conn, Fd.c.resource_key, keys),
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
        .where(any_key(conn, A.c.resource_key, keys), A.c.state.in_(_INDEXED_STATES))
    ):
        text[key]["tags"].extend([tag_name, full_name, *(str(s) for s in synonyms or [])])
        facets[key].add(("tag", str(full_name)))
        if state == TagAssociationState.ACCEPTED.value and sensitivity in _SENSITIVITY_RANK:
            now = highest.get(key)
            if now is None or _SENSITIVITY_RANK[sensitivity] > _SENSITIVITY_RANK[now]:
                highest[key] = str(sensitivity)
    V = resource_custom_values
    for key, property_key, value in conn.execute(
        select(V.c.resource_key, V.c.property_key, V.c.value)
        .where(any_key(conn, V.c.resource_key, keys))
    ):
        for category in _category(value):
            text[key]["custom"].append(category)
            facets[key].add((search_facets.stored_custom(property_key), category))
    documents: list[dict[str, Any]] = []
    values: list[dict[str, Any]] = []
    columns: list[dict[str, Any]] = []
    counted: dict[str, facet_cells.State] = {}
    for r in rows:
        parts = text[r.key]
        documents.append({
            "resource_key": r.key, "name": normalise(r.name), "path": normalise(r.path),
            **{col: normalise(" ".join(parts[col])) for col in parts},
        })
        held = (field_types[r.key], highest.get(r.key, search_facets.NO_SENSITIVITY))
        if held != (r.facet_field_types, r.facet_sensitivity):
            columns.append({"_key": r.key, "_types": held[0], "_sensitivity": held[1]})
        values.extend({"resource_key": r.key, "facet": f, "category": c}
                      for f, c in facets[r.key])
        counted[r.key] = (facet_cells.coordinates(
            r.data_source_key, r.resource_type, r.file_format, r.owner, held[1],
            r.resource_size, held[0], r.time_of_resource_change), frozenset(facets[r.key]))
    facet_cells.update(conn, keys, counted)
    bulk_insert.insert_rows(conn, DOC, documents)
    if values:
        bulk_insert.insert_rows(conn, FV, values)
    if columns:  # most refreshes change neither (a new resource's row was written with them)
        conn.execute(
            update(R).where(R.c.key == bindparam("_key"))
            .values(facet_field_types=bindparam("_types"),
                    facet_sensitivity=bindparam("_sensitivity")),
            columns,
        )
    new = {int(i): str(k) for i, k in conn.execute(
        select(DOC.c.doc_id, DOC.c.resource_key).where(any_key(conn, DOC.c.resource_key, keys)))}
    facet_cells.write_documents(conn, new, counted, {r.key: r.name for r in rows})
    index.documents_written(conn, list(new))


# ------------------------------------------------------------------------------ matching

_ATTRIBUTES: dict[str, Any] = {
    "source": S.c.name_fold, "format": func.lower(R.c.file_format),
    "owner": func.lower(R.c.owner),
    "type": func.replace(R.c.resource_type, search_facets.TYPE_PREFIX, ""),
}


@dataclass
class Matching:
    """How a parsed phrase selects resources: ``condition`` (None: every resource), and the
    relation giving each matched resource its ``score`` (None: no text, score 0)."""

    condition: ColumnElement[bool] | None
    ranked: Subquery | None
    inner: bool = False
    #: The phrase's (doc_id, score) when it is a pure conjunction of terms (``inner``).
    scored: Subquery | None = None


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
        return Matching(R.c.key.in_(select(ranked.c.resource_key)), ranked, inner=True,
                        scored=index.scored(pure, every=True))
    terms = positive_terms(node)
    return Matching(_compile(index, node),
                    index.ranked(terms, every=False) if terms else None)


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


def _ranking(plan: Plan, score: Any) -> Ranking:
    specs = list(plan.sort)
    if not specs:
        specs = [("name", True)] if isinstance(plan.node, Everything) else [("score", False)]
    keys = [(score if prop == "score" else _SORTS[prop], ascending,
             prop in ("name", "resourcePath", "dataSourceName")) for prop, ascending in specs]
    return Ranking(score, [*keys, (R.c.name, True, True), (R.c.key, True, False)])


@dataclass
class Outcome:
    """A search's facet results and its matches in order, as [key, score]: every one
    (``complete``), or only the first ones asked for, then ``matched`` says how many there are
    and :func:`order_all` on the same snapshot gives them all."""

    matches: list[list[Any]]
    facet_results: list[dict[str, Any]]
    matched: int
    complete: bool = True


@dataclass
class _Compiled:
    source: FromClause
    where: list[ColumnElement[bool]]
    chosen: dict[str, ColumnElement[bool]]
    ranking: Ranking
    #: The phrase's (doc_id, score) relation when every match has a score (a pure conjunction
    #: of terms), and the matches are ordered by it alone (then name and key).
    by_score: Subquery | None = None


def _compiled(conn: Connection, vis: Visibility, ctx: FacetContext, plan: Plan) -> _Compiled:
    visible = visible_condition(conn, vis)
    match = matching(conn, plan.node)
    chosen = {name: selection_condition(conn, ctx, ctx.facets[name], cats)
              for name, cats in plan.selections.items()}
    source: FromClause = joined()
    score: Any = literal(0.0)
    where = [visible] + ([match.condition] if match.condition is not None else [])
    if match.ranked is not None:
        ranked = match.ranked
        if match.inner:
            source = source.join(ranked, ranked.c.resource_key == R.c.key)
            where = [visible]
            score = ranked.c.score
        else:
            source = source.outerjoin(ranked, ranked.c.resource_key == R.c.key)
            score = func.coalesce(ranked.c.score, 0.0)
    by_score = match.scored if match.inner and plan.sort in ([], [("score", False)]) else None
    return _Compiled(source, where, chosen, _ranking(plan, score), by_score)


def search(
    conn: Connection, vis: Visibility, ctx: FacetContext, plan: Plan, *,
    first: int | None = None,
) -> Outcome:
    """Run a checked search for a caller: every facet's counts and the ordered matches.

    A keyword search ordered by score counts and orders its matches from their documents' facet
    rows (:func:`~catalog_nb.server.store.facet_cells.keyword_counts`) where they answer exactly;
    any other counts its matches and orders them in one statement
    (:func:`~catalog_nb.server.store.facets.search_pass`). A search by facets alone counts the
    cells (:mod:`~catalog_nb.server.store.facet_cells`) where they answer exactly; given
    ``first``, it then reads only that many matches, in order, from the name index, and leaves
    the rest to :func:`order_all` (an incomplete outcome)."""
    compiled = _compiled(conn, vis, ctx, plan)
    by_cells = None
    unselected = next((n for n in ctx.facets if n not in plan.selections), None)
    if isinstance(plan.node, Everything) and unselected is not None:
        by_cells = facet_cells.counts(conn, vis, ctx, plan.selections, compiled.chosen)
    elif compiled.by_score is not None:
        by_keywords = facet_cells.keyword_counts(
            conn, vis, ctx, plan.selections, compiled.chosen, compiled.by_score,
            where=compiled.where, source=compiled.source, ranking=compiled.ranking)
        if by_keywords is not None:
            found_counts, matches = by_keywords
            return Outcome(matches, facet_results(ctx, found_counts, plan.selections),
                           len(matches))
    if by_cells is None:
        found = search_pass(conn, ctx, compiled.where, compiled.chosen, source=compiled.source,
                            ranking=compiled.ranking)
        return Outcome(found.matches, facet_results(ctx, found.facets, plan.selections),
                       len(found.matches))
    results = facet_results(ctx, by_cells.counted, plan.selections)
    # Any facet without a selection is counted over the resources passing every selection.
    matched = by_cells.counted[str(unselected)][0]
    if first is None or first >= matched:
        matches = _ordered(conn, compiled)
        return Outcome(matches, results, len(matches))
    # Walking the name index finds the first page after about first * seen / matched entries.
    walk = first * by_cells.seen / max(matched, 1)
    leading = _leading(conn, compiled, first, in_name_order=walk <= MAX_NAME_WALK)
    return Outcome(leading, results, matched, complete=False)


def _ordered(conn: Connection, compiled: _Compiled) -> list[list[Any]]:
    """Every match of a keyword-less search in order (on SQLite read in order from the name
    index when sorted by name, as the first page is)."""
    return _leading(conn, compiled, None, in_name_order=False)


#: The most name index entries a first page may be expected to walk for PostgreSQL to be
#: told to walk it (beyond, sorting the matches costs about the same).
MAX_NAME_WALK = 20_000


def _leading(
    conn: Connection, compiled: _Compiled, first: int | None, *, in_name_order: bool,
) -> list[list[Any]]:
    """The ``first`` matches (None: all) of a keyword-less search, in the search's order.

    ``in_name_order``: on PostgreSQL, sorting is priced out for this statement, so the plan
    walks the name index: its estimates of the facet conditions (expressions over columns) are
    far too low, and it would read and sort every match for a first page instead."""
    order = []
    seen: list[Any] = []
    for key, ascending, textual in compiled.ranking.keys:
        if any(key is known for known in seen):
            continue  # a tie-breaker repeating a sort key
        seen.append(key)
        key = code_points(conn, key) if textual else key
        ordered_key = key.asc() if ascending else key.desc()
        # NULLS LAST only where a value can be missing: on a NOT NULL column it would keep
        # SQLite from reading the name index in order.
        if not (isinstance(key, Column) and not key.nullable) and not textual:
            ordered_key = ordered_key.nulls_last()
        order.append(ordered_key)
    query = (select(R.c.key, compiled.ranking.score)
             .select_from(compiled.source)
             .where(*compiled.where, *compiled.chosen.values())
             .order_by(*order))
    if first is not None:
        query = query.limit(first)
    nudged = in_name_order and conn.dialect.name == "postgresql"
    if nudged:
        conn.exec_driver_sql(f"SET LOCAL enable_sort = {NAME_ORDER_SORT}")
    try:
        return [[str(key), float(score or 0.0)] for key, score in conn.execute(query)]
    finally:
        if nudged:
            conn.exec_driver_sql("SET LOCAL enable_sort = on")


#: ``enable_sort`` while PostgreSQL reads a first page in name order (tests explain with it).
NAME_ORDER_SORT = "off"


def order_all(conn: Connection, vis: Visibility, ctx: FacetContext, plan: Plan) -> list[list[Any]]:
    """Every match of a keyword-less search, in order (what an incomplete :func:`search`
    leaves to be done, on the same snapshot, after the answer).

    On PostgreSQL without parallel workers: work done after the answer should not take the
    cores the next requests need (facet-only searches one after another over 100,000
    resources took 49 ms each beside the workers of the one before, 30 ms without)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SET LOCAL max_parallel_workers_per_gather = 0")
    return _ordered(conn, _compiled(conn, vis, ctx, plan))


# ------------------------------------------------------------------------ stored results


def _session(token: str) -> str:
    """The stored form of a session token (as ``store.sessions`` keeps it)."""
    return hashlib.sha256(token.encode()).hexdigest()


#: ``stored_searches.state``: every match stored in order; or the first ones only while the
#: rest are being ordered (:func:`complete` stores them all), or left to the first page that
#: asks for them (the session searched again: ``server.orderings`` may skip the ordering).
READY, ORDERING, DEFERRED = "ready", "ordering", "deferred"


def save(
    conn: Connection, token: str, criteria: Mapping[str, Any], summary: Mapping[str, Any],
    matches: list[list[Any]], *, matched: int | None = None,
) -> str:
    """Store a result for the session; returns its key. Only the latest results are kept.

    ``matched``: ``matches`` are only the first of that many, the result is stored as being
    ordered until :func:`complete` stores them all. The session's results still being ordered
    are from now on left to their pages (``DEFERRED``)."""
    key, session, now = new_key(), _session(token), now_ms()
    X = stored_searches
    added = insert(X).values(
        key=key, token_hash=session, criteria=dict(criteria), summary=dict(summary),
        ordered=encoded_json(conn, matches), created_ms=now,
        state=READY if matched is None else ORDERING,
        matched=matched,
    )
    if conn.dialect.name == "postgresql":
        # One statement, one round trip instead of three. Its parts all read the rows as they
        # were before it: the session's newest results but one are kept (the new one makes
        # the number), and only those are deferred (a row both deferred and dropped would be
        # changed twice in one statement, which PostgreSQL resolves as it pleases).
        kept = (select(X.c.key).where(X.c.token_hash == session)
                .order_by(X.c.created_ms.desc(), X.c.key.desc())
                .limit(KEEP_PER_SESSION - 1).scalar_subquery())
        dropped = delete(X).where(X.c.token_hash == session, X.c.key.not_in(kept))
        deferred = (update(X).where(X.c.token_hash == session, X.c.state == ORDERING,
                                    X.c.key.in_(kept)).values(state=DEFERRED))
        conn.execute(added.add_cte(dropped.cte("dropped"), deferred.cte("deferred")))
        return key
    conn.execute(update(X).where(X.c.token_hash == session, X.c.state == ORDERING)
                 .values(state=DEFERRED))
    conn.execute(added)
    kept_all = select(X.c.key).where(X.c.token_hash == session).order_by(
        X.c.created_ms.desc(), X.c.key.desc()).limit(KEEP_PER_SESSION)
    conn.execute(delete(X).where(X.c.token_hash == session, X.c.key.not_in(
        select(kept_all.subquery().c.key))))
    return key


def complete(conn: Connection, key: str, matches: list[list[Any]]) -> bool:
    """Store every match of a result saved as being ordered; False when it is no longer
    waiting for them (dropped with older results, or completed already)."""
    X = stored_searches
    done = conn.execute(update(X).where(X.c.key == key, X.c.state.in_((ORDERING, DEFERRED)))
                        .values(ordered=encoded_json(conn, matches), state=READY, matched=None))
    return bool(done.rowcount)


def encoded_json(conn: Connection, value: Any) -> Any:
    """``value`` for a JSON column, encoded by the caller (orjson) instead of by the driver
    while the statement runs: a hundred thousand matches are megabytes of JSON, and on SQLite
    the write lock is held meanwhile (by a low-priority thread, for :func:`complete`)."""
    encoded = bindparam(None, orjson.dumps(value).decode(), type_=Text)
    # SQLite stores the text as it is; CAST(... AS JSON) there would mean NUMERIC.
    return cast(encoded, JSON) if conn.dialect.name == "postgresql" else encoded


def load(conn: Connection, token: str, key: str | None) -> dict[str, Any]:
    """The session's stored result named ``key``, or its latest; 400 ``NO_SEARCH`` / 404."""
    X = stored_searches
    # The ordered keys as text, decoded by orjson: 100,000 matches are a few MB of JSON, read
    # again for every page.
    query = select(*[cast(c, Text).label("ordered") if c is X.c.ordered else c for c in X.c]
                   ).where(X.c.token_hash == _session(token))
    if key is None:
        row = conn.execute(
            query.order_by(X.c.created_ms.desc(), X.c.key.desc()).limit(1)
        ).mappings().first()
        if row is None:
            raise BadRequest(
                "There is no search to page through; start one with POST /search/new "
                "(or /search/runFacet).", ErrorCode.NO_SEARCH,
            )
        return _decoded(row)
    row = conn.execute(query.where(X.c.key == key)).mappings().first()
    if row is None:
        raise NotFound(f"There is no search with key '{key}' in your session.",
                       ErrorCode.SEARCH_NOT_FOUND)
    return _decoded(row)


def _decoded(row: Any) -> dict[str, Any]:
    found = dict(row)
    found["ordered"] = loads_many([found["ordered"]])[0]
    return found


def facet_catalogue(conn: Connection, vis: Visibility, ctx: FacetContext) -> list[dict[str, Any]]:
    """Every facet with the categories that hold at least one visible resource (from the cells
    where they answer, else :func:`~catalog_nb.server.store.facets.facet_catalogue`)."""
    by_cells = facet_cells.counts(conn, vis, ctx, {}, {})
    if by_cells is None:
        return counted_catalogue(conn, vis, ctx)
    return [
        {"facetName": name, "displayName": facet.display_name,
         "facetCategories": list(ordered(by_cells.counted[name][1], facet))}
        for name, facet in ctx.facets.items()
    ]
