"""Facet counts kept ahead of the searches: *cells*.

A facet-only search counts every facet over a large share of the catalog: even read from the
covering index, counting 100,000 resources one by one takes a good part of a second. But the
built-in facets of a resource are a handful of columns with few distinct values, so the catalog
falls into a few hundred *cells*: resources with the same data source, resource type, file
format, owner, sensitivity, size range, field data types and day of last change. Each derived
category (a tag, a custom property value) likewise counts its holders per cell. A search without
a keyword then counts the cells (a few thousand rows at most) instead of the resources.

**Kept exact by every write.** :func:`update` is called by the index refresh
(``store.search.refresh``) that every write path already runs in its own transaction: it takes
back what a resource was counted under (``search_cell_members`` remembers it, since the resource
row has changed by then) and counts what it holds now. The counts are appended as signed delta
rows, so concurrent writers on PostgreSQL only ever insert (no row is updated by two
transactions, no lost update, no deadlock over a hot cell); :func:`compact` folds the rows
together now and then (one compactor at a time on PostgreSQL, under an advisory lock; the rows it
folds are exactly the rows it deleted). :func:`rebuild` recounts everything (migration).

**Visibility stays exact.** The data source is a coordinate, so the cells of the sources a
caller sees whole are simply selected. Resources the caller sees through a granted virtual
folder or data set, on a source not seen whole, are counted one by one (the existing pass) and
added; so are resources changed on a day that holds a boundary of the ``lastModified`` ranges
(only part of such a day is within the range). Counts the cells cannot give exactly make
:func:`counts` answer None, and the caller counts per resource: a selection on the virtual
folder facet, several categories selected in a derived facet (a resource holding two would be
counted twice), or a derived selection next to another derived facet (the cells do not know
which categories are held together). Virtual folder counts are path matches: they are counted
per resource, over the resources in a visible folder only.

**Keyword searches** count their matches the same way (:func:`keyword_counts`): each search
document has a facet row (``search_document_facets``, keyed by the document's id, which the
full-text match gives) holding what the resource is counted under and its name, written by the
same refresh; the matches are grouped into cells of their own and ordered from those rows, so
neither the resource rows nor the facet values are read per match.
"""

from __future__ import annotations

import functools
import json
import operator
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson
from sqlalchemy import (
    ColumnElement,
    Connection,
    Float,
    and_,
    cast,
    delete,
    func,
    insert,
    or_,
    select,
)
from sqlalchemy.sql import FromClause

from catalog_nb.server.search import facets as search_facets
from catalog_nb.server.store import bulk_insert
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store.common import any_key, chunks
from catalog_nb.server.store.definitions import GenerationKept, source_names
from catalog_nb.server.store.document_rows import scored_rows
from catalog_nb.server.store.facets import FacetContext, MaskSums, Ranking, search_pass
from catalog_nb.server.store.schema import (
    data_resources,
    search_cell_members,
    search_cells,
    search_document_facets,
    search_documents,
    search_facet_values,
)
from catalog_nb.server.store.visible import (
    seen_through_grants_only,
    specs_condition,
    visible_condition,
)
from catalog_nb.server.visibility import Visibility

C, M, R, D = search_cells, search_cell_members, data_resources, search_document_facets
#: The resource cells' ``facet`` (and ``category``); derived cells carry the facet row's.
RESOURCE = ""
#: Delta rows appended between two compactions (roughly: cell ids crossing a multiple).
COMPACT_EVERY = 4096
#: The PostgreSQL advisory lock of the compactor (any constant the catalog uses for nothing else).
_COMPACT_LOCK = 0x5EA3C5E11
#: The facets the cells answer, with the coordinate that gives their category.
_COLUMN_FACETS = ("dataSource", "resourceType", "fileFormat", "owner", "sensitivity",
                  "sizeRange", "lastModified")


class Coordinates(NamedTuple):
    """Where a resource is counted (the columns of ``search_cells`` and its member entry)."""

    data_source_key: str
    resource_type: str
    file_format: str | None
    owner: str | None
    sensitivity: str | None
    size_range: str
    field_types: int
    change_day: int | None


COLUMNS = Coordinates._fields
#: A resource's counted state: its coordinates and its derived (facet, category) pairs.
State = tuple[Coordinates, frozenset[tuple[str, str]]]


def size_range(size: int | None) -> str:
    """The ``sizeRange`` category of a size (as ``store.facets.expression`` computes it)."""
    if size is None:
        return search_facets.UNKNOWN
    for category, bound in search_facets.SIZE_RANGES:
        if size < bound:
            return category
    return search_facets.SIZE_ABOVE


def coordinates(
    source_key: str, resource_type: str, file_format: str | None, owner: str | None,
    sensitivity: str | None, size: int | None, field_types: int | None, changed: int | None,
) -> Coordinates:
    """The cell of a resource with these column values."""
    return Coordinates(
        str(source_key), str(resource_type),
        None if file_format is None else str(file_format).lower(), owner, sensitivity,
        size_range(size), int(field_types or 0),
        None if changed is None else int(changed) // search_facets.DAY_MS,
    )


def _cells(state: State) -> Iterable[tuple[str, str, Coordinates]]:
    place, derived = state
    yield RESOURCE, RESOURCE, place
    for facet, category in derived:
        yield facet, category, place


def _row(facet: str, category: str, place: Coordinates, n: int) -> dict[str, Any]:
    return {"facet": facet, "category": category, **place._asdict(), "n": n}


# ------------------------------------------------------------------------------- writing


def _members(conn: Connection, keys: Sequence[str]) -> dict[str, State]:
    # Under lock_resources: two writers refreshing one resource never both take back the
    # same old state.
    query = select(M).where(any_key(conn, M.c.resource_key, keys))
    found: dict[str, State] = {}
    for row in conn.execute(query).mappings():
        pairs = frozenset((str(f), str(c)) for f, c in json.loads(row["derived"]))
        found[str(row["resource_key"])] = (Coordinates(*(row[c] for c in COLUMNS)), pairs)
    return found


def lock_resources(conn: Connection, keys: Sequence[str]) -> None:
    """On PostgreSQL, lock the resource rows of a refresh (in key order) before it reads
    anything: concurrent refreshes of one resource then run one after the other, each reading
    what the one before left (READ COMMITTED). The resource row, not a row of the search
    tables: a writer that changed the resource holds its lock already, so waiting on another
    lock here could close a cycle. SQLite has one writer at a time."""
    if conn.dialect.name == "postgresql" and keys:
        conn.execute(select(R.c.key).where(any_key(conn, R.c.key, sorted(keys)))
                     .order_by(R.c.key).with_for_update())


def update(conn: Connection, keys: Sequence[str], current: Mapping[str, State]) -> None:
    """Count these resources under their ``current`` state (a key missing from it: the
    resource is gone) instead of what they were counted under; in the caller's transaction."""
    if not keys:
        return
    before = _members(conn, keys)
    delta: Counter[tuple[str, str, Coordinates]] = Counter()
    changed: list[str] = []
    for key in keys:
        old, new = before.get(key), current.get(key)
        if old == new:
            continue
        changed.append(key)
        if old is not None:
            delta.subtract(_cells(old))
        if new is not None:
            delta.update(_cells(new))
    if not changed:
        return
    counted_before = [key for key in changed if key in before]
    if counted_before:  # a new resource has no entry yet
        conn.execute(delete(M).where(any_key(conn, M.c.resource_key, counted_before)))
    members = [{"resource_key": key, **current[key][0]._asdict(),
                "derived": json.dumps(sorted(current[key][1]))}
               for key in changed if key in current]
    if members:
        bulk_insert.insert_rows(conn, M, members)
    rows = [_row(f, c, place, n) for (f, c, place), n in delta.items() if n]
    if rows:
        bulk_insert.insert_rows(conn, C, rows)
        top = int(conn.execute(select(func.max(C.c.cell_id))).scalar_one() or 0)
        if top // COMPACT_EVERY != (top - len(rows)) // COMPACT_EVERY:
            compact(conn)


def write_documents(
    conn: Connection, documents: Mapping[int, str], current: Mapping[str, State],
    names: Mapping[str, str],
) -> None:
    """The facet rows of these new documents (doc_id -> resource key) of resources counted
    under their ``current`` state, named ``names``; in the caller's transaction (the rows of the
    documents they replace are gone with them)."""
    rows = [_document_row(doc_id, key, names[key], *current[key])
            for doc_id, key in documents.items() if key in current]
    if rows:
        bulk_insert.insert_rows(conn, D, rows)


def _document_row(doc_id: int, key: str, name: str, place: Coordinates,
                  derived: Iterable[tuple[str, str]] | str) -> dict[str, Any]:
    """A document's facet row (``derived``: the pairs, or their JSON text as members keep
    it), with its ``tail`` (:func:`keyword_counts` reads it)."""
    held = derived if isinstance(derived, str) else json.dumps(sorted(derived))
    return {"doc_id": doc_id, "resource_key": key, "name": name,
            "change_day": place.change_day, "tail": json.dumps([*place[:-1], held])}


def drop_documents(conn: Connection, doc_ids: Sequence[int]) -> None:
    """Forget the facet rows of these documents (called before the documents are deleted)."""
    if doc_ids:
        conn.execute(delete(D).where(any_key(conn, D.c.doc_id, doc_ids)))


def rebuild_documents(conn: Connection) -> None:
    """Write every document's facet row again from the members and the resource names
    (migration, repair; after :func:`rebuild`)."""
    conn.execute(delete(D))
    Doc = search_documents
    query = (select(Doc.c.doc_id, Doc.c.resource_key, R.c.name, *(M.c[c] for c in COLUMNS),
                    M.c.derived)
             .join(R, R.c.key == Doc.c.resource_key)
             .join(M, M.c.resource_key == Doc.c.resource_key))
    rows = [_document_row(doc_id, key, name, Coordinates._make(place), derived)
            for doc_id, key, name, *place, derived in conn.execute(query)]
    for at in range(0, len(rows), 5000):
        conn.execute(insert(D), rows[at:at + 5000])


def compact(conn: Connection) -> None:
    """Fold the delta rows into one row per cell (cells counting nothing are dropped)."""
    cols = ", ".join(("facet", "category", *COLUMNS))
    if conn.dialect.name == "postgresql":
        # One compactor at a time; the others skip (their rows are folded next time). The
        # DELETE and the INSERT read one snapshot, so rows committed meanwhile stay as they are.
        locked = conn.exec_driver_sql(
            f"SELECT pg_try_advisory_xact_lock({_COMPACT_LOCK})").scalar_one()
        if not locked:
            return
        conn.exec_driver_sql(
            f"WITH gone AS (DELETE FROM search_cells RETURNING {cols}, n) "
            f"INSERT INTO search_cells ({cols}, n) SELECT {cols}, sum(n) FROM gone "
            f"GROUP BY {cols} HAVING sum(n) <> 0")
        return
    top = conn.execute(select(func.max(C.c.cell_id))).scalar_one()
    if top is None:
        return
    # SQLite has one writer at a time: nothing can come between the two statements.
    conn.exec_driver_sql(
        f"INSERT INTO search_cells ({cols}, n) SELECT {cols}, sum(n) FROM search_cells "
        f"WHERE cell_id <= {int(top)} GROUP BY {cols} HAVING sum(n) <> 0")
    conn.execute(delete(C).where(C.c.cell_id <= int(top)))


def rebuild(conn: Connection) -> None:
    """Count every resource again from its row and facet values (migration, repair)."""
    conn.execute(delete(C))
    conn.execute(delete(M))
    derived: dict[str, set[tuple[str, str]]] = defaultdict(set)
    FV = search_facet_values
    for key, facet, category in conn.execute(select(FV.c.resource_key, FV.c.facet,
                                                    FV.c.category)):
        derived[str(key)].add((str(facet), str(category)))
    query = select(R.c.key, R.c.data_source_key, R.c.resource_type, R.c.file_format,
                   R.c.owner, R.c.facet_sensitivity, R.c.resource_size, R.c.facet_field_types,
                   R.c.time_of_resource_change)
    totals: Counter[tuple[str, str, Coordinates]] = Counter()
    members: list[dict[str, Any]] = []
    for key, *values in conn.execute(query):
        state = (coordinates(*values), frozenset(derived.get(str(key), ())))
        totals.update(_cells(state))
        members.append({"resource_key": key, **state[0]._asdict(),
                        "derived": json.dumps(sorted(state[1]))})
        if len(members) >= 5000:
            conn.execute(insert(M), members)
            members = []
    if members:
        conn.execute(insert(M), members)
    rows = [_row(f, c, place, n) for (f, c, place), n in totals.items() if n]
    for at in range(0, len(rows), 5000):
        conn.execute(insert(C), rows[at:at + 5000])


# ------------------------------------------------------------------------------ counting

Counted = dict[str, tuple[int, dict[str, int]]]


def answerable(ctx: FacetContext, selections: Mapping[str, Sequence[str]]) -> bool:
    """Whether the cells count a keyword-less search with these selections exactly."""
    derived = [f for f in ctx.facets.values() if f.kind == "derived"]
    for facet in ctx.facets.values():
        if facet.kind in ("column", "bucket") and facet.name not in _COLUMN_FACETS:
            return False
    for name, categories in selections.items():
        facet = ctx.facets[name]
        if facet.kind == "folder":
            return False
        if facet.kind == "derived" and (len(categories) > 1 or len(derived) > 1):
            return False
    return True


def boundary_days(now: int) -> set[int]:
    """The days holding a boundary of the ``lastModified`` ranges measured from ``now``."""
    return {(now - age) // search_facets.DAY_MS for _, age in search_facets.AGE_RANGES}


def _age(day: int | None, now: int) -> str:
    """The ``lastModified`` category of a day that holds no range boundary."""
    if day is None:
        return search_facets.UNKNOWN
    for category, age in search_facets.AGE_RANGES:
        if day * search_facets.DAY_MS >= now - age:
            return category
    return search_facets.AGE_ABOVE


def _categories(place: Coordinates, names: Mapping[str, str], now: int) -> dict[str, Any]:
    return {
        "dataSource": names.get(place.data_source_key),
        "resourceType": place.resource_type.replace(search_facets.TYPE_PREFIX, ""),
        "fileFormat": place.file_format, "owner": place.owner,
        "sensitivity": place.sensitivity, "sizeRange": place.size_range,
        "lastModified": _age(place.change_day, now),
    }


@dataclass(slots=True)
class Held:
    """What is counted at one place (coordinates): how many resources (``n``), and how many of
    them hold each derived category, by stored facet name (``derived[facet][category]``)."""

    n: int = 0
    derived: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, facet: str, category: str, n: int) -> None:
        """Count ``n`` more holders of a derived category."""
        held = self.derived.setdefault(facet, {})
        held[category] = held.get(category, 0) + n


#: Every place counted, and what it holds: the cells grouped by their coordinates, so a search
#: works out what a place passes once rather than once per derived category held there.
Places = dict[Coordinates, Held]


class _Cells(NamedTuple):
    places: Places
    #: The days of change of the places (for the boundary days' check).
    days: frozenset[int | None]


def _read_cells(conn: Connection) -> _Cells:
    """Every cell (delta rows summed) by place."""
    query = select(C.c.facet, C.c.category, *(C.c[c] for c in COLUMNS), C.c.n)
    summed: dict[tuple[str, str, Coordinates], int] = defaultdict(int)
    for facet, category, *columns, n in conn.execute(query).all():
        summed[(facet, category, Coordinates(*columns))] += int(n)
    places: Places = {}
    for (facet, category, place), n in summed.items():
        if n:
            held = places.get(place) or places.setdefault(place, Held())
            if facet == RESOURCE:
                held.n += n
            else:
                held.add(facet, category, n)
    return _Cells(places, frozenset(place.change_day for place in places))


#: The cells, reused while the catalog's generation stays the one they were read at: a
#: facet-only search then reads one row.
_ALL_CELLS = GenerationKept(_read_cells)


def _seen(places: Places) -> int:
    return sum(held.n for held in places.values())


def _from_places(
    places: Places, ctx: FacetContext,
    selections: Mapping[str, Sequence[str]], names: Mapping[str, str], skipped: set[int],
) -> Counted:
    """Every facet but the virtual folders' counted from the places' cells (days in
    ``skipped`` left out), each over the selections other than its own (as
    ``store.facets.search_pass``)."""
    bits = {name: 1 << i for i, name in enumerate(selections)}
    full = (1 << len(selections)) - 1
    columns = [n for n, f in ctx.facets.items() if f.kind in ("column", "bucket")]
    types = [n for n, f in ctx.facets.items() if f.kind == "bits"]
    by_stored = {str(f.stored): n for n, f in ctx.facets.items() if f.kind == "derived"}
    chosen = None
    for name, categories in selections.items():
        if ctx.facets[name].kind == "derived":
            chosen = (name, str(ctx.facets[name].stored), str(categories[0]))
    # With a derived selection, a derived facet is that facet itself (answerable): its own
    # selection does not apply to it.
    own = bits[chosen[0]] if chosen is not None else 0
    sums = MaskSums()
    for place, held in places.items():
        if place.change_day is not None and place.change_day in skipped:
            continue
        found = _categories(place, names, ctx.now)
        mask = _mask(found, place, ctx, selections, bits)
        for stored, holders in held.derived.items():
            counted = by_stored.get(stored)
            if counted is not None:
                into = sums.counts[counted][mask | own]
                for category, n in holders.items():
                    if n > 0:
                        into[category] += n
        if held.n <= 0:
            continue
        units = [(mask, held.n)]
        if chosen is not None:
            holding = held.derived.get(chosen[1], {}).get(chosen[2], 0)
            units = [(mask | bits[chosen[0]], holding), (mask, held.n - holding)]
        for unit, count in units:
            if count <= 0:
                continue
            sums.totals[unit] += count
            for name in columns:
                if found[name] is not None:
                    sums.counts[name][unit][str(found[name])] += count
            for name in types:
                for category, bit in search_facets.FIELD_TYPE_BITS.items():
                    if place.field_types & bit:
                        sums.counts[name][unit][category] += count
    return sums.result(ctx.facets, bits, full)


def _mask(found: Mapping[str, Any], place: Coordinates, ctx: FacetContext,
          selections: Mapping[str, Sequence[str]], bits: Mapping[str, int]) -> int:
    """The bits of the selections but the derived ones that a place passes (``found``: its
    categories)."""
    mask = 0
    for name, categories in selections.items():
        facet = ctx.facets[name]
        if facet.kind == "bits":
            wanted = 0
            for category in categories:
                wanted |= search_facets.FIELD_TYPE_BITS.get(category, 0)
            passed = bool(place.field_types & wanted)
        elif facet.kind == "derived":
            continue  # per unit, from the holders' cell
        else:
            passed = found[name] is not None and str(found[name]) in set(categories)
        if passed:
            mask |= bits[name]
    return mask


def _add(into: Counted, more: Mapping[str, tuple[int, dict[str, int]]], *,
         totals: bool = True) -> None:
    for name, (total, categories) in more.items():
        before, counted = into.get(name, (0, {}))
        merged = dict(counted)
        for category, n in categories.items():
            merged[category] = merged.get(category, 0) + n
        into[name] = (before + (total if totals else 0), merged)


class CellCounts(NamedTuple):
    """What :func:`counts` gives: every facet counted, and how many resources the caller's
    visible cells hold (the matches' share of them says how far a first page is)."""

    counted: Counted
    seen: int


def counts(
    conn: Connection, vis: Visibility, ctx: FacetContext,
    selections: Mapping[str, Sequence[str]], chosen: Mapping[str, ColumnElement[bool]],
) -> CellCounts | None:
    """Every facet of ``ctx`` counted for a search without a keyword, each over the
    ``selections`` (with their conditions ``chosen``) other than its own, as
    ``store.facets.search_pass`` counts them; None when the cells cannot count it exactly
    (module docstring)."""
    if not answerable(ctx, selections):
        return None
    kept = _ALL_CELLS.get(conn)
    places, days = kept.places, kept.days
    if not vis.everything:  # the cells of the sources the caller sees whole
        places = {place: held for place, held in kept.places.items()
                  if place.data_source_key in vis.sources}
        days = frozenset(place.change_day for place in places)
    skipped = boundary_days(ctx.now)
    counted = _from_places(places, ctx, selections, source_names(conn), skipped)
    _count_rest(conn, vis, ctx, chosen, counted, boundary=not days.isdisjoint(skipped),
                where=[visible_condition(conn, vis)])
    return CellCounts(counted, _seen(places))


def _count_rest(
    conn: Connection, vis: Visibility, ctx: FacetContext,
    chosen: Mapping[str, ColumnElement[bool]], counted: Counted, *, boundary: bool,
    where: Sequence[ColumnElement[bool]], source: FromClause | None = None,
    ranking: Ranking | None = None,
) -> list[list[Any]]:
    """Add to ``counted`` what the cells leave out, resource by resource, among the resources
    ``where`` selects from ``source``: those changed on a boundary day (``boundary``: some may
    be), those seen through folder and data set grants only (their sources' cells were not
    read), and the virtual folder facet. With a ``ranking``, the first two's matches."""
    rest: list[ColumnElement[bool]] = []
    if boundary:
        changed = R.c.time_of_resource_change
        day_ms = search_facets.DAY_MS
        rest.extend(and_(changed >= day * day_ms, changed < (day + 1) * day_ms)
                    for day in sorted(boundary_days(ctx.now)))
    granted_only = seen_through_grants_only(conn, vis)
    if granted_only is not None:
        rest.append(granted_only)
    plain = FacetContext(ctx.facets, [], ctx.now)
    matches: list[list[Any]] = []
    if rest:
        found = search_pass(conn, plain, [*where, or_(*rest)], chosen, source=source,
                            ranking=ranking)
        _add(counted, found.facets)
        matches = found.matches
    folder = [(n, f) for n, f in ctx.facets.items() if f.kind == "folder"]
    if folder and ctx.folders:
        # Only the resources in a visible folder; the facet's total came with the others.
        within = or_(*(specs_condition(conn, folder_store.specs_of(f)) for f in ctx.folders))
        alone = FacetContext(dict(folder), ctx.folders, ctx.now)
        _add(counted, search_pass(conn, alone, [*where, within], chosen, source=source).facets,
             totals=False)
    return matches


@dataclass(slots=True)
class _Group:
    """Matches of :func:`keyword_counts` counted alike: where they are counted, their derived
    categories, whether they pass every selection, and how many there are."""

    place: Coordinates
    derived: frozenset[tuple[str, str]]
    full: bool
    n: int = 0


#: Parsed tails kept per process (:func:`_parsed_tail`).
TAILS_KEPT = 16_384


@functools.lru_cache(maxsize=TAILS_KEPT)
def _parsed_tail(tail: str) -> tuple[tuple[Any, ...], frozenset[tuple[str, str]]]:
    """A document facet row's ``tail``: its coordinates but the day, and its derived pairs.

    Kept per process, as a tail's text always means the same: a catalog has few distinct tails
    (the cells' coordinates), and parsing them again on every keyword search was a tenth of
    its time (a thousand distinct tails among 5,000 matches)."""
    *values, derived = orjson.loads(tail)
    return tuple(values), frozenset((str(f), str(c)) for f, c in orjson.loads(derived))


#: The number of a document row's spot (``document_rows.scored_rows``).
_SPOT = operator.itemgetter(2)


def keyword_counts(
    conn: Connection, vis: Visibility, ctx: FacetContext,
    selections: Mapping[str, Sequence[str]], chosen: Mapping[str, ColumnElement[bool]],
    scored: FromClause, *, where: Sequence[ColumnElement[bool]], source: FromClause,
    ranking: Ranking,
) -> tuple[Counted, list[list[Any]]] | None:
    """Every facet counted for a keyword search, and its matches as [key, score] by score
    (best first), then name and key; None when the cells' coordinates cannot count it exactly
    (:func:`answerable`).

    ``scored`` is the phrase's (doc_id, score) relation. Each match's name, coordinates and
    derived categories are its document's facet row (``search_document_facets``: a narrow row,
    by the integer key the full-text match gives, kept per process once read:
    :mod:`~catalog_nb.server.store.document_rows`) instead of the wide resource row (by text
    key) and a probe of the facet values per match; matches counted alike make one cell
    (:func:`_from_places`). The coordinates come as one JSON text per match (the row's
    ``tail``) and its day: a group is worked out once per distinct pair, so that per match only
    its group is looked up, counted, and the match kept for the ordering when the group passes
    every selection. What the cells cannot give exactly is counted per resource, as
    :func:`counts` does, over ``where`` and ``source`` (the search's) and ordered by
    ``ranking``."""
    if not answerable(ctx, selections):
        return None
    # The score as the one-pass statement reads it (PostgreSQL's ts_rank is a real, which that
    # statement's UNION makes a double precision): equal scores then order alike.
    query = select(scored.c.doc_id, cast(scored.c.score, Float))
    skipped = boundary_days(ctx.now)
    names = source_names(conn)
    bits = {name: 1 << i for i, name in enumerate(selections)}
    full = (1 << len(selections)) - 1
    derived_chosen = [(bits[n], (str(ctx.facets[n].stored), str(c[0])))
                      for n, c in selections.items() if ctx.facets[n].kind == "derived"]
    first_in_range: dict[str, int] = {}
    masks: dict[Coordinates, int] = {}
    tails: dict[str, tuple[tuple[Any, ...], frozenset[tuple[str, str]], int] | None] = {}
    boundary = False

    def read(tail: str) -> tuple[tuple[Any, ...], frozenset[tuple[str, str]], int] | None:
        """A tail's coordinates (the day aside), derived categories and the bits of the
        derived selections they pass; None when its source is not seen whole."""
        values, pairs = _parsed_tail(tail)
        if not vis.sees_source(str(values[0])):
            return None
        return values, pairs, sum(bit for bit, pair in derived_chosen if pair in pairs)

    days: dict[int, int | None] = {}
    alike: dict[tuple[str, int | None], _Group | None] = {}

    def group(tail: str, day: int | None) -> _Group | None:
        """The group of the matches with this tail and day; None for those the cells leave
        to :func:`_count_rest` (changed on a boundary day) or that are not counted (their
        source is not seen whole)."""
        nonlocal boundary
        if day is not None:
            if day not in days:
                # Away from the boundary days, the lastModified range is all a day tells: the
                # first day seen in a range stands for every day in it (their cells make one).
                days[day] = None if day in skipped else first_in_range.setdefault(
                    _age(day, ctx.now), day)
            if days[day] is None:
                boundary = True
                return None
            day = days[day]
        if (tail, day) in alike:
            return alike[(tail, day)]
        found: _Group | None = None
        known = tails[tail] = tails[tail] if tail in tails else read(tail)
        if known is not None:
            values, pairs, derived_bits = known
            place = Coordinates._make([*values, day])
            mask = masks.get(place)
            if mask is None:
                found_in = _categories(place, names, ctx.now)
                mask = masks[place] = _mask(found_in, place, ctx, selections, bits)
            found = _Group(place, pairs, mask | derived_bits == full)
        alike[(tail, day)] = found
        return found

    # Per match, the least work (a few thousand matches per search): counted by spot, in C.
    found_rows = scored_rows(conn, query)
    passing: set[int] = set()
    for number, n in Counter(map(_SPOT, found_rows.rows)).items():
        found = group(*found_rows.spots[number])
        if found is not None:
            found.n += n
            if found.full:
                passing.add(number)
    ranked_matches = [(-score, row[1], row[0])
                      for score, row in zip(found_rows.scores, found_rows.rows, strict=True)
                      if row[2] in passing]
    places: Places = {}
    for found in alike.values():
        if found is not None and found.n:
            held = places.get(found.place) or places.setdefault(found.place, Held())
            held.n += found.n
            for facet, category in found.derived:
                held.add(facet, category, found.n)
    counted = _from_places(places, ctx, selections, names, skipped)
    rest = _count_rest(conn, vis, ctx, chosen, counted, boundary=boundary, where=where,
                       source=source, ranking=ranking)
    if rest:
        rest_names: dict[str, str] = {}
        for chunk in chunks([str(k) for k, _ in rest]):
            rest_names.update((str(k), str(n)) for k, n in conn.execute(
                select(R.c.key, R.c.name).where(any_key(conn, R.c.key, chunk))))
        ranked_matches.extend((-float(s), rest_names[k], k) for k, s in rest)
    # As the searches order: score (best first), then name and key by code point.
    ranked_matches.sort()
    return counted, [[key, -negated] for negated, _, key in ranked_matches]


def folded(conn: Connection) -> list[tuple[Any, ...]]:
    """Every cell as (facet, category, *coordinates, count), its delta rows summed, the empty
    ones left out: what tests compare with a per-resource count."""
    cols = [C.c.facet, C.c.category, *(C.c[c] for c in COLUMNS)]
    query = select(*cols, func.sum(C.c.n)).group_by(*cols).having(func.sum(C.c.n) != 0)
    return [tuple(row) for row in conn.execute(query)]
