"""FACTUAL lineage from SQL view definitions, parsed with sqlglot.

Every current view's ``viewDefinition`` (kept by profiling in the resource's ``extra``) is
parsed in its source's dialect. The tables and views it reads, resolved in the view's own schema
against the catalog's resources of the same data source, become table-level edges. Column
lineage comes from sqlglot's ``lineage`` over the query qualified with a schema built from the
catalog's own field lists: for each output column, the input columns its value is computed from
(projection lineage; columns used only in joins, filters or grouping are not listed).

What a view gets, recorded in ``lineage_status``:

* ``PARSED``: table and column lineage.
* ``PARTIAL``: the reason says what is missing. Column lineage sqlglot could not follow (a
  ``SELECT *`` over a table the catalog does not know, a construct its lineage does not handle)
  leaves table-level edges only; tables the catalog does not know get no edge and are named.
* ``UNPARSED``: the parser refused the SQL; no edges, the parser's message is the reason.
* ``NONE``: the database gave no definition.

One bad view never stops the others: every failure of sqlglot is caught per view and becomes
that view's state.

Example::

    report = refresh(store, settings)
    report.counts   # {"viewsParsed": 4, "viewsPartial": 1, "viewsUnparsed": 0, "factualEdges": 9}
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.lineage import lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import build_scope

from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import lineage as lineage_store
from catalog_nb.server.store.lineage import (
    FACTUAL,
    NONE,
    PARSED,
    PARTIAL,
    UNPARSED,
    EdgeRecord,
    StatusRecord,
)

log = logging.getLogger(__name__)

#: SQLAlchemy backend name -> sqlglot dialect (others are parsed in sqlglot's generic dialect).
DIALECTS = {
    "sqlite": "sqlite", "postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql",
    "mssql": "tsql", "oracle": "oracle", "duckdb": "duckdb", "snowflake": "snowflake",
    "bigquery": "bigquery", "redshift": "redshift", "trino": "trino", "hive": "hive",
    "databricks": "databricks", "clickhouse": "clickhouse",
}

#: Catalog data types as SQL types for sqlglot's schema (only names matter to qualification).
_SQL_TYPES = {"LONG": "BIGINT", "DOUBLE": "DOUBLE", "BOOLEAN": "BOOLEAN", "DATE": "DATE",
              "TIMESTAMP": "TIMESTAMP", "BINARY": "BLOB"}

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MAX_REASON = 500


def dialect_of(uri: str | None) -> str | None:
    """The sqlglot dialect of a data source URI (None: sqlglot's generic dialect).

    >>> dialect_of("postgresql+psycopg://u@db/sales")
    'postgres'
    """
    if not uri:
        return None
    try:
        backend = make_url(uri).get_backend_name()
    except ArgumentError:
        return None
    return DIALECTS.get(backend)


@dataclass(frozen=True)
class Relation:
    """A table or view of the catalog that a view may read."""

    key: str
    schema: str
    name: str
    fields: tuple[tuple[str, str], ...]

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


@dataclass
class Relations:
    """The tables and views of one data source, found by (schema, name), case-insensitively."""

    by_name: dict[tuple[str, str], list[Relation]] = field(default_factory=dict)
    by_table: dict[str, list[Relation]] = field(default_factory=dict)

    def add(self, relation: Relation) -> None:
        key = (relation.schema.casefold(), relation.name.casefold())
        self.by_name.setdefault(key, []).append(relation)
        self.by_table.setdefault(relation.name.casefold(), []).append(relation)

    def find(self, schema: str | None, name: str, default_schema: str) -> Relation | None:
        """The relation ``schema.name``; an unqualified name resolves in ``default_schema``,
        else in the one schema holding it (a search path). Exact spelling wins over folding."""
        if schema:
            candidates = self.by_name.get((schema.casefold(), name.casefold()), [])
        else:
            candidates = self.by_name.get((default_schema.casefold(), name.casefold()), [])
            if not candidates and len(self.by_table.get(name.casefold(), [])) == 1:
                candidates = self.by_table[name.casefold()]
        exact = [r for r in candidates if r.name == name]
        chosen = exact or candidates
        return chosen[0] if chosen else None


@dataclass
class ViewOutcome:
    """What one view yields: its edges (upstream key -> field lineage) and its status."""

    state: str
    reason: str | None = None
    upstream: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    tables: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def _short(message: str) -> str:
    text = " ".join(_ANSI.sub("", message).split())
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def _parse_message(exc: Exception) -> str:
    """The parser's message without terminal colours, with where it stopped."""
    if isinstance(exc, ParseError) and exc.errors:
        first = exc.errors[0]
        where = ""
        if first.get("line") is not None:
            where = f" (line {first.get('line')}, column {first.get('col')})"
        return _short(f"{first.get('description') or exc}{where}")
    return _short(str(exc) or type(exc).__name__)


def _query_of(tree: exp.Expr) -> tuple[exp.Expr | None, list[str]]:
    """The query of a statement (``CREATE VIEW ... AS <query>`` or a bare query) and the
    column names a ``CREATE VIEW v(a, b)`` declares."""
    declared: list[str] = []
    query: exp.Expr | None = tree
    if isinstance(tree, exp.Create):
        target = tree.this
        if isinstance(target, exp.Schema):
            declared = [e.name for e in target.expressions]
        query = tree.expression
    if not isinstance(query, exp.Query):
        return None, declared
    return query, declared


def _table_refs(query: exp.Expr) -> list[exp.Table]:
    """The tables and views a query reads (CTE names are not tables)."""
    ctes = {cte.alias_or_name.casefold() for cte in query.find_all(exp.CTE)}
    found = []
    for table in query.find_all(exp.Table):
        if not table.name:
            continue  # table functions and the like
        if not table.db and table.name.casefold() in ctes:
            continue
        found.append(table)
    return found


def _sqlglot_schema(relations: Sequence[Relation]) -> dict[str, object]:
    schema: dict[str, dict[str, object]] = defaultdict(dict)
    for relation in relations:
        schema[relation.schema][relation.name] = {
            name: _SQL_TYPES.get(data_type, "TEXT") for name, data_type in relation.fields
        }
    return dict(schema)


def _column_lineage(
    query: exp.Expr, dialect: str | None, view_schema: str, relations: Relations,
    known: Sequence[Relation], output_names: Mapping[str, str],
) -> dict[str, dict[str, list[str]]]:
    """upstream key -> output column -> input columns; raises SqlglotError (or anything sqlglot
    raises) when the columns cannot be followed."""
    schema = _sqlglot_schema(known)
    qualified = qualify(query.copy(), schema=schema, dialect=dialect, db=view_schema or None,
                        validate_qualify_columns=True, identify=False)
    selects = qualified.selects if isinstance(qualified, exp.Query) else []
    if any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and s.is_star)
           for s in selects):
        raise SqlglotError("SELECT * over a table whose columns the catalog does not know")
    scope = build_scope(qualified)
    if scope is None:
        raise SqlglotError("the view's SQL is not a query sqlglot can follow")
    nodes = lineage(None, qualified, schema=schema, dialect=dialect, scope=scope)
    assert isinstance(nodes, dict)
    found: dict[str, dict[str, list[str]]] = defaultdict(dict)
    positional = len(nodes) == sum(1 for k in output_names if k.startswith("#"))
    for position, (name, node) in enumerate(nodes.items()):
        output = output_names.get(name.casefold(), name)
        if positional:
            output = output_names[f"#{position}"]
        for leaf in node.walk():
            if leaf.downstream or not isinstance(leaf.expression, exp.Table):
                continue
            table = leaf.expression
            relation = relations.find(table.db or None, table.name, view_schema)
            if relation is None:
                continue
            column = exp.to_column(leaf.name, dialect=dialect).name
            spelled = {n.casefold(): n for n, _ in relation.fields}.get(column.casefold(), column)
            inputs = found[relation.key].setdefault(output, [])
            if spelled not in inputs:
                inputs.append(spelled)
    # sqlglot walks sets: order the inputs as the table orders its columns, for stable answers.
    for relation in known:
        order = {name: i for i, (name, _) in enumerate(relation.fields)}
        for inputs in found.get(relation.key, {}).values():
            inputs.sort(key=lambda name: (order.get(name, len(order)), name))
    return found


def analyse_view(
    definition: str | None, dialect: str | None, view_schema: str, view_fields: Sequence[str],
    relations: Relations, view_key: str | None = None,
) -> ViewOutcome:
    """Lineage of one view from its SQL; never raises for bad SQL (the outcome says why).

    ``view_fields`` are the view's own field names in the catalog, which spell the output
    columns; ``relations`` the tables and views of its data source.
    """
    if not definition or not definition.strip():
        return ViewOutcome(NONE, "The database gave no definition for this view.")
    tree = _parse(definition, dialect, view_key)
    if isinstance(tree, ViewOutcome):
        return tree
    query, declared = _query_of(tree)
    unread = _unreadable(tree, query, dialect)
    if unread is not None:
        return unread
    assert query is not None  # _unreadable answered for every tree without a query
    outcome = ViewOutcome(PARSED)
    known = _read_tables(query, relations, view_schema, view_key, outcome)
    output_names = {name.casefold(): name for name in view_fields}
    # By position too: the catalog's field names are what the database calls the columns,
    # also those sqlglot can only name "_col_0" (an unaliased expression) or a declared list.
    output_names.update({f"#{i}": name for i, name in enumerate(declared or view_fields)})
    reasons = []
    if outcome.unknown:
        reasons.append("it reads tables the catalog does not know: " + ", ".join(outcome.unknown))
    try:
        traced = _column_lineage(query, dialect, view_schema, relations, known, output_names)
    except Exception as exc:  # noqa: BLE001 - sqlglot's optimizer raises many kinds of errors
        reasons.insert(0, f"sqlglot could not follow its columns ({_parse_message(exc)}), so "
                          "the lineage is table level only")
    else:
        for key, columns in traced.items():
            if key in outcome.upstream:
                outcome.upstream[key] = [
                    {"downstreamField": out, "upstreamFields": inputs}
                    for out, inputs in columns.items()
                ]
    if reasons:
        outcome.state = PARTIAL
        outcome.reason = _short("Partial lineage: " + "; ".join(reasons) + ".")
    return outcome


def _parse(definition: str, dialect: str | None, view_key: str | None) -> exp.Expr | ViewOutcome:
    """The view's SQL parsed by sqlglot, or the UNPARSED outcome saying why it could not be."""
    try:
        return sqlglot.parse_one(definition, read=dialect)
    except (ParseError, TokenError) as exc:
        return ViewOutcome(UNPARSED, f"sqlglot could not parse the view's SQL "
                                     f"({dialect or 'generic'} dialect): {_parse_message(exc)}")
    except Exception as exc:  # noqa: BLE001 - sqlglot may fail in unforeseen ways on odd SQL
        log.warning("sqlglot failed on the view %s: %s", view_key, exc)
        return ViewOutcome(UNPARSED, f"sqlglot failed on the view's SQL: {_parse_message(exc)}")


def _unreadable(
    tree: exp.Expr, query: exp.Expr | None, dialect: str | None
) -> ViewOutcome | None:
    """The outcome of a parsed view that has no query to follow (an opaque command: UNPARSED;
    literal rows: PARSED, reading no table; anything else: UNPARSED); None when it has one."""
    if isinstance(tree, exp.Command):
        return ViewOutcome(UNPARSED, "sqlglot does not support the syntax of the view's SQL "
                                     f"({dialect or 'generic'} dialect) and could only read it "
                                     "as an opaque command.")
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Values):
        return ViewOutcome(PARSED)  # a view of literal rows reads no table
    if query is None:
        body = tree.expression if isinstance(tree, exp.Create) else tree
        return ViewOutcome(UNPARSED, "The view's definition holds no query sqlglot recognises "
                                     f"(it read {type(body).__name__}).")
    return None


def _read_tables(
    query: exp.Expr, relations: Relations, view_schema: str, view_key: str | None,
    outcome: ViewOutcome,
) -> list[Relation]:
    """The catalog's relations the query reads (the view itself left out), each once; adds
    them to ``outcome``'s tables and upstream, and the names it does not know to ``unknown``."""
    known: list[Relation] = []
    for table in _table_refs(query):
        relation = relations.find(table.db or None, table.name, view_schema)
        if relation is None:
            name = ".".join(p for p in (table.db or view_schema, table.name) if p)
            if name not in outcome.unknown:
                outcome.unknown.append(name)
        elif relation.key != view_key and relation not in known:
            known.append(relation)
            outcome.tables.append(relation.qualified)
            outcome.upstream[relation.key] = []
    return known


def _relations_by_source(rows: Sequence[Mapping[str, Any]]) -> dict[str, Relations]:
    found: dict[str, Relations] = defaultdict(Relations)
    for row in rows:
        found[row["data_source_key"]].add(Relation(
            key=row["key"], schema=row["data_schema_name"] or "", name=row["table_name"] or "",
            fields=tuple(row["fields"]),
        ))
    return found


def refresh(store: Store, settings: Settings) -> StepReport:
    """Recompute every view's FACTUAL lineage and status, replacing the earlier ones at once.

    ``settings`` is part of every step's signature; view lineage has no tunable part.
    """
    with store.read() as conn:
        views = lineage_store.views(conn)
        relation_rows = lineage_store.sql_relations(conn, {v["data_source_key"] for v in views})
    relations = _relations_by_source(relation_rows)
    fields_of = {row["key"]: [name for name, _ in row["fields"]] for row in relation_rows}
    edges: list[EdgeRecord] = []
    statuses: list[StatusRecord] = []
    tally = {PARSED: 0, PARTIAL: 0, UNPARSED: 0, NONE: 0}
    for view in views:
        dialect = dialect_of(view["source_uri"])
        outcome = analyse_view(
            view["view_definition"], dialect, view["data_schema_name"] or "",
            fields_of.get(view["key"], []), relations[view["data_source_key"]], view["key"],
        )
        tally[outcome.state] += 1
        statuses.append(StatusRecord(view["key"], outcome.state, outcome.reason))
        for upstream_key, field_lineage in outcome.upstream.items():
            edges.append(EdgeRecord(
                upstream_key=upstream_key, downstream_key=view["key"], lineage_type=FACTUAL,
                score=1.0, field_lineage=field_lineage,
                evidence={"parser": "sqlglot", "dialect": dialect or "generic",
                          "state": outcome.state, "tablesRead": outcome.tables,
                          "unknownTables": outcome.unknown},
            ))
    with store.write() as conn:
        stored = lineage_store.replace_edges(conn, FACTUAL, edges, statuses)
    counts = {"viewsParsed": tally[PARSED], "viewsPartial": tally[PARTIAL],
              "viewsUnparsed": tally[UNPARSED], "factualEdges": stored}
    summary = ""
    if views:
        summary = (f"View lineage: {tally[PARSED]} of {len(views)} views parsed, "
                   f"{tally[PARTIAL]} partial, {tally[UNPARSED]} unparsed; {stored} factual "
                   "edges.")
    return StepReport(counts=counts, summary=summary)
