"""Facets of a search: its matches and every facet's counts in one statement, driven from the
matches.

Each facet's categories are counted over the resources matched by the phrase and by the
selections of the *other* facets (docs/search-api.md). A facet without a selection is therefore
counted over the search's matches, and a selected one over the matches of the other selections:
with ``k`` selected facets every count is taken over resources that pass the phrase and at
least ``k - 1`` of the selections. :func:`search_pass` gathers exactly those *candidates* once,
in a common table expression that records which selections each one passes as a bit mask
(``mask``), and reads everything from it in a single ``UNION ALL`` statement:

* the matches (candidates passing every selection), ranked by the search's sort order;
* the ``column``, ``bucket`` and ``bits`` facets (data source, type, format, owner,
  sensitivity, size and age ranges, field data types): the candidates grouped by their own
  categories and mask. All of them are read from one covering index entry per candidate
  (``ix_resources_facets``), never from the wide resource rows; the index refresh keeps the
  sensitivity and the field data types (a bit mask) on the resource row for this;
* the ``derived`` facets (tags, custom property values): each candidate's categories read from
  its own ``search_facet_values`` rows (a correlated subquery on the primary key), grouped, so
  the count reads the facet rows of the candidates only, never the table whole or from its
  category index;
* virtual folders: one flag per visible folder.

Python then adds up, per facet, the groups whose mask passes every selection but the facet's
own. A search is one statement whatever the number of facets, and its work grows with its
candidates, not with the catalog. ``tests/server/test_search_plans.py`` checks the plans with
``EXPLAIN``.

A selected category that is not one of its facet's fixed ones is checked by
:func:`check_selections` with one probe (from the category index, for a derived facet) that
stops at the first visible resource holding it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Float,
    Integer,
    String,
    case,
    cast,
    func,
    literal,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.sql import FromClause

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.search import facets as search_facets
from catalog_nb.server.search.facets import FIELD_TYPE_BITS
from catalog_nb.server.store import definitions
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store.common import code_points, now_ms
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    search_facet_values,
)
from catalog_nb.server.store.visible import specs_condition, visible_condition
from catalog_nb.server.visibility import Visibility

R, S, FV = data_resources, data_sources, search_facet_values


@dataclass
class FacetContext:
    """What facet counting needs once per request: the facets in force (built-in and custom),
    the visible virtual folders, and the time the age ranges are measured from."""

    facets: dict[str, search_facets.Facet]
    folders: list[dict[str, Any]] = field(default_factory=list)
    now: int = 0


def facet_context(conn: Connection, vis: Visibility) -> FacetContext:
    """The facets in force for a caller, in their order on the wire."""
    found = {f.name: f for f in search_facets.BUILT_IN}
    for key, name, display in definitions.custom_facets(conn):
        facet = search_facets.custom_facet(key, name, display)
        found[facet.name] = facet
    return FacetContext(found, [f for f in definitions.folders(conn) if vis.sees_folder(f)],
                        now_ms())


def joined() -> FromClause:
    """Resources with their data source: what searches and counts select from.

    A LEFT JOIN, though every resource has its source: SQLite then never puts the few data
    sources in the outer loop, where a keyword search's full-text scan would run once per
    source instead of once.
    """
    return R.outerjoin(S, S.c.key == R.c.data_source_key)


def expression(ctx: FacetContext, facet: search_facets.Facet) -> Any:
    """The category of a ``column`` or ``bucket`` facet, as an expression over a resource."""
    if facet.name == "dataSource":
        return S.c.name
    if facet.name == "resourceType":
        return func.replace(R.c.resource_type, search_facets.TYPE_PREFIX, "")
    if facet.name == "fileFormat":
        return func.lower(R.c.file_format)
    if facet.name == "owner":
        return R.c.owner
    if facet.name == "sensitivity":
        return R.c.facet_sensitivity
    if facet.name == "sizeRange":
        size = R.c.resource_size
        return case(
            (size.is_(None), search_facets.UNKNOWN),
            *((size < bound, category) for category, bound in search_facets.SIZE_RANGES),
            else_=search_facets.SIZE_ABOVE,
        )
    if facet.name == "lastModified":
        changed = R.c.time_of_resource_change
        return case(
            (changed.is_(None), search_facets.UNKNOWN),
            *((changed >= ctx.now - age, category) for category, age in search_facets.AGE_RANGES),
            else_=search_facets.AGE_ABOVE,
        )
    raise ValueError(f"no expression for facet {facet.name!r}")


def _folder_condition(conn: Connection, folder: Mapping[str, Any]) -> ColumnElement[bool]:
    return specs_condition(conn, folder_store.specs_of(folder))


def selection_condition(
    conn: Connection, ctx: FacetContext, facet: search_facets.Facet, categories: Sequence[str]
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
    if facet.kind == "bits":
        wanted = 0
        for category in categories:
            wanted |= FIELD_TYPE_BITS.get(category, 0)
        return R.c.facet_field_types.op("&")(literal(wanted, Integer)) != 0
    return expression(ctx, facet).in_(list(categories))


def ordered(categories: Mapping[str, int], facet: search_facets.Facet) -> dict[str, int]:
    """Categories in their display order: a fixed facet's own order, else most resources
    first, then by name."""
    if facet.fixed is not None:
        fixed = {c: categories[c] for c in facet.fixed if c in categories}
        rest = {c: n for c, n in sorted(categories.items()) if c not in fixed}
        return {**fixed, **rest}
    return dict(sorted(categories.items(), key=lambda item: (-item[1], item[0])))


def _held(
    conn: Connection, visible: ColumnElement[bool], ctx: FacetContext, facet: search_facets.Facet,
    category: str,
) -> bool:
    """Whether a resource the caller sees is in this category of the facet: one probe that
    stops at the first (a derived category is found from its index, the rows holding it)."""
    if facet.kind == "derived":
        query = (
            select(literal(1))
            .select_from(FV.join(R, R.c.key == FV.c.resource_key))
            .where(FV.c.facet == facet.stored, FV.c.category == category, visible)
        )
    else:
        condition = selection_condition(conn, ctx, facet, [category])
        query = select(literal(1)).select_from(joined()).where(visible, condition)
    return conn.execute(query.limit(1)).first() is not None


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
            visible = visible_condition(conn, vis)
            missing = [c for c in missing if not _held(conn, visible, ctx, facet, c)]
        if missing:
            listed = ", ".join(repr(m) for m in missing[:10])
            raise BadRequest(
                f"The facet '{name}' has no category {listed}; GET /search/facets lists them.",
                ErrorCode.INVALID_FACET, field="facetSelections", unknown=missing,
            )


# ---------------------------------------------------------------------- one-pass counting

#: The ``kind`` of each part of the statement: the ordered matches, candidates grouped by
#: their facet columns, derived categories, virtual folders.
_MATCH, _GROUPED, _DERIVED, _FOLDER = "m", "g", "d", "v"


def _text(value: str | None) -> Any:
    return cast(null(), String) if value is None else literal(value, String)


def _selection_mask(chosen: Mapping[str, ColumnElement[bool]]) -> Any:
    """Which selections a resource passes: bit ``i`` for the ``i``-th of ``chosen``."""
    mask: Any = literal(0, Integer)
    for bit, condition in enumerate(chosen.values()):
        flag = case((condition, 1 << bit), else_=0)
        mask = flag if bit == 0 else mask + flag
    return mask


def _held_categories(conn: Connection, stored: Sequence[str]) -> Any:
    """A resource's categories of these derived facets, as a JSON array of [facet, category]
    pairs (NULL when it holds none): one probe of the facet rows' primary key per candidate,
    a correlated subquery, so that no planner can turn it into a walk of the whole table (a
    join let SQLite build a Bloom filter over every row, and PostgreSQL hash them all)."""
    if conn.dialect.name == "postgresql":
        pairs: Any = func.json_agg(func.json_build_array(FV.c.facet, FV.c.category))
        pairs = cast(pairs, String)
    else:
        pairs = func.json_group_array(func.json_array(FV.c.facet, FV.c.category))
    return (select(pairs)
            .where(FV.c.resource_key == R.c.key, FV.c.facet.in_(list(stored)))
            .having(func.count() > 0)
            .scalar_subquery())


@dataclass
class Ranking:
    """How a search orders its matches: their ``score``, and the sort ``keys`` in order, as
    (expression, ascending, compared as text), tie-breakers included; missing values last."""

    score: Any
    keys: list[tuple[Any, bool, bool]]


@dataclass
class Pass:
    """What one pass over a search's candidates found: each facet's (total, {category:
    count}) by name, and with a ranking, every match in order as [key, score]."""

    facets: dict[str, tuple[int, dict[str, int]]]
    matches: list[list[Any]]


def search_pass(
    conn: Connection, ctx: FacetContext, where: Sequence[ColumnElement[bool]],
    chosen: Mapping[str, ColumnElement[bool]], *, source: FromClause | None = None,
    ranking: Ranking | None = None,
) -> Pass:
    """Every facet of ``ctx`` counted over the resources of
    ``source`` (default: resources with their data source) that ``where`` matches, each over
    the selections in ``chosen`` (facet name -> condition) other than its own; with a
    ``ranking``, the matches of every selection too, in order. One statement (module
    docstring). Categories with no resource are left out, as are NULL ``column`` categories.
    """
    wanted = list(ctx.facets.items())
    names = list(chosen)
    if len(names) > 30:  # one bit each in the mask, which must stay an integer
        raise ValueError("at most 30 facets may be selected at once")
    full = (1 << len(names)) - 1
    conditions = list(where)
    if len(names) >= 2:
        # A candidate passes all selections but at most one: none other is counted anywhere.
        passed = sum((case((c, 1), else_=0) for c in chosen.values()), literal(0, Integer))
        conditions.append(passed >= len(names) - 1)
    columns = [(n, f) for n, f in wanted if f.kind in ("column", "bucket")]
    bits = [n for n, f in wanted if f.kind == "bits"]
    folders = ctx.folders if any(f.kind == "folder" for _, f in wanted) else []
    derived = [(n, f) for n, f in wanted if f.kind == "derived"]
    keys = ranking.keys if ranking is not None else []
    # Each sort expression once in the candidates (the tie-breakers often repeat a key).
    sorted_by: list[Any] = []
    for key, _, _ in keys:
        if not any(key is known for known in sorted_by):
            sorted_by.append(key)
    candidates = (
        select(
            R.c.key.label("key"), _selection_mask(chosen).label("mask"),
            R.c.facet_field_types.label("bits"),
            *(expression(ctx, f).label(f"c{i}") for i, (_, f) in enumerate(columns)),
            *(case((_folder_condition(conn, folder), 1), else_=0).label(f"v{j}")
              for j, folder in enumerate(folders)),
            *((_held_categories(conn, [str(f.stored) for _, f in derived]).label("derived"),)
              if derived else ()),
            *((ranking.score.label("score"),) if ranking is not None else ()),
            *(key.label(f"o{i}") for i, key in enumerate(sorted_by) if key is not R.c.key),
        )
        .select_from(source if source is not None else joined())
        .where(*conditions)
        .cte("candidates")
    )
    c = candidates.c
    group = [c[f"c{i}"] for i in range(len(columns))]
    if bits:
        group.append(c.bits)
    # Every part has the same columns: kind, mask, a count (a rank for a match), the grouped
    # part's columns, a label and a category (a match's key), and a match's score.
    padding = [cast(null(), Integer) if col is c.bits else _text(None) for col in group]
    no_score = cast(null(), Float)
    width = len(group)
    parts: list[Any] = [
        select(_text(_GROUPED), c.mask, func.count(), *group, _text(None), _text(None),
               no_score)
        .group_by(c.mask, *group)
    ]
    if ranking is not None:
        order = []
        for expression_, ascending, textual in keys:
            at = next(i for i, known in enumerate(sorted_by) if known is expression_)
            key = c.key if expression_ is R.c.key else c[f"o{at}"]
            key = code_points(conn, key) if textual else key
            order.append((key.asc() if ascending else key.desc()).nulls_last())
        parts.append(
            select(_text(_MATCH), c.mask, func.row_number().over(order_by=order), *padding,
                   c.key, _text(None), c.score)
            .where(c.mask == full)
        )
    for j, folder in enumerate(folders):
        parts.append(
            select(_text(_FOLDER), c.mask, func.count(), *padding, _text("virtualFolder"),
                   _text(str(folder["name"])), no_score)
            .where(c[f"v{j}"] == 1).group_by(c.mask)
        )
    if derived:
        # Candidates holding the same derived categories make one group (a JSON array of
        # [facet, category] pairs, NULL for none), decoded below.
        parts.append(
            select(_text(_DERIVED), c.mask, func.count(), *padding, c.derived, _text(None),
                   no_score)
            .where(c.derived.is_not(None)).group_by(c.derived, c.mask)
        )
    statement: Any = union_all(*parts) if len(parts) > 1 else parts[0]
    tally = _Tally([n for n, _ in columns], bits[0] if bits else None,
                   {str(f.stored): n for n, f in derived}, width)
    for row in conn.execute(statement):
        tally.add(row)
    results = tally.result([n for n, _ in wanted],
                           {name: 1 << i for i, name in enumerate(names)}, full)
    tally.ranked.sort()
    return Pass(results, [[key, score] for _, key, score in tally.ranked])


class MaskSums:
    """Resources added up by the selections they pass (a bit mask, bit ``i`` for the ``i``-th
    selection): how many per mask (``totals``), and per facet name and mask how many per
    category (``counts``). Both ways of counting a search fill one: the one-pass statement
    (:func:`search_pass`) and the facet cells (``store.facet_cells``)."""

    def __init__(self) -> None:
        self.totals: dict[int, int] = defaultdict(int)
        self.counts: dict[str, dict[int, dict[str, int]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(int)))

    def result(self, names: Iterable[str], bits: Mapping[str, int], full: int
               ) -> dict[str, tuple[int, dict[str, int]]]:
        """Each facet's (total, {category: count}) over the resources passing every selection
        but its own (``bits``: each selected facet's bit; ``full``: every bit)."""
        found: dict[str, tuple[int, dict[str, int]]] = {}
        for name in names:
            own = bits.get(name, 0)
            total = sum(n for m, n in self.totals.items() if (m | own) == full)
            summed: dict[str, int] = defaultdict(int)
            for m, categories in self.counts[name].items():
                if (m | own) == full:
                    for category, n in categories.items():
                        summed[category] += n
            found[name] = (total, dict(summed))
        return found


class _Tally(MaskSums):
    """The rows of a search's statement added up (:class:`MaskSums`), and the matches as
    (rank, key, score). ``columns``: the grouped facets in their order; ``bits``: the field
    data type facet's name; ``derived``: facet names by stored name; ``width``: grouped
    columns."""

    def __init__(self, columns: list[str], bits: str | None, derived: dict[str, str],
                 width: int) -> None:
        super().__init__()
        self.columns, self.bits, self.derived, self.width = columns, bits, derived, width
        self.ranked: list[tuple[int, str, float]] = []

    def add(self, row: Any) -> None:
        kind, mask, n, width = row[0], int(row[1]), int(row[2]), self.width
        if kind == _MATCH:
            self.ranked.append((n, str(row[3 + width]), float(row[5 + width] or 0.0)))
        elif kind == _GROUPED:
            self.totals[mask] += n
            for name, category in zip(self.columns, row[3:3 + len(self.columns)], strict=True):
                if category is not None:
                    self.counts[name][mask][str(category)] += n
            if self.bits is not None:
                held = int(row[3 + len(self.columns)] or 0)
                for category, bit in FIELD_TYPE_BITS.items():
                    if held & bit:
                        self.counts[self.bits][mask][category] += n
        elif kind == _DERIVED:
            for stored, category in json.loads(row[3 + width]):
                self.counts[self.derived[stored]][mask][str(category)] += n
        else:
            self.counts[str(row[3 + width])][mask][str(row[4 + width])] += n


def facet_results(
    ctx: FacetContext, counted: Mapping[str, tuple[int, dict[str, int]]],
    selections: Mapping[str, list[str]],
) -> list[dict[str, Any]]:
    """The ``facetResults`` of a search: every facet with its total and ordered counts."""
    return [
        {"name": name, "displayName": facet.display_name, "totalCount": counted[name][0],
         "categoryCounts": ordered(counted[name][1], facet),
         "selectedCategories": list(selections.get(name, []))}
        for name, facet in ctx.facets.items()
    ]


def facet_catalogue(conn: Connection, vis: Visibility, ctx: FacetContext) -> list[dict[str, Any]]:
    """Every facet with the categories that hold at least one visible resource."""
    counted = search_pass(conn, ctx, [visible_condition(conn, vis)], {}).facets
    return [
        {"facetName": name, "displayName": facet.display_name,
         "facetCategories": list(ordered(counted[name][1], facet))}
        for name, facet in ctx.facets.items()
    ]
