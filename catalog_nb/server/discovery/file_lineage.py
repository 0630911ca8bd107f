"""INFERRED lineage: files whose fields and values are contained in an older resource.

A derived copy, a cleaned subset or a filtered extract keeps (most of) its source's columns with
the source's values, perhaps renamed or in another format. Profiling keeps a bottom-k value
sketch per field (:mod:`catalog_nb.server.profiling.sketch`), and the containment of one field's
distinct values in another's is estimated from two sketches alone, without reading any data.
A row subset has the same containment as the whole, so subsets and copies score alike.

Resource D (a profiled file or collection, never a collection's member) is derived from
resource S (a file, collection, table or view) when:

* at least :data:`MIN_FIELD_SHARE` of D's fields that have values are *matched*: a field of S of
  a compatible type contains at least ``lineage_min_containment`` of the field's values. A field
  with fewer than ``join_min_distinct`` distinct values (flags, statuses) only matches, or is
  matched by, a field of the same name, since a handful of values is contained almost anywhere;
  at least
  :data:`MIN_MATCHED_FIELDS` fields match, one of them with enough distinct values;
* D has no more rows than S;
* S is older: its ``timeOfResourceChange`` is earlier (equal times never make an edge). A table
  or view whose change time the database does not give counts as older than any file: databases
  are where files are exported from, never the other way round here.

The score is the matched share times the mean containment of the matched fields. Each edge says
what kind of derivation it is (``evidence.kind``, :func:`kind_of`): ``COPY`` when the two
resources' fields match one to one (every field with values on either side, each upstream field
matched once) with near-complete containment (:data:`COPY_CONTAINMENT`) and about as many rows
(:data:`COPY_ROW_RATIO`): the same table as a CSV file, a Parquet export and an SQL table;
``SUBSET`` when the fields match one to one but rows are missing (a partial copy, a filtered
extract); ``PROJECTION`` when each derived field matches a field of its own with near-complete
containment but the source has more columns (an export of some of a table's columns);
``DERIVED`` otherwise (cleaned or computed columns). Copies, subsets and projections hold
one table's rows, so they are lineage, not joins: join discovery drops conditions between
them and reports a copy's joins once per partner (:mod:`.join_copies`). A copy's direction
follows the rule above (the database table first, then the older file).
A small table (a lookup of five regions) has no field of many distinct values; it is still
anchored when it matches a resource one to one by field names with every value contained and
as many rows (:meth:`Inference._small_copy`). A resource
derived from several candidates keeps the best, plus any within :data:`TIE` of it, and then
drops a candidate that is itself upstream of another kept one (a cleaned subset of an export is
derived from the export, not also from the export's table): edges stay direct.

The work grows with the number of fields times the sketch size (see :class:`Inference`): the
sketches' hashes sit in one sorted array, and a field's shared hashes with the fields of the
catalog that share any come from a few vector operations, never from comparing pairs one by one.
An incremental run (a PROFILE job) recomputes only the resources the changed ones may now feed,
or fed (:meth:`Inference.reachable`).
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from catalog_nb.contract import ResourceType
from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.discovery.sketch_index import SketchIndex, index_for
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import lineage as lineage_store
from catalog_nb.server.store.lineage import FACTUAL, INFERRED, EdgeRecord

log = logging.getLogger(__name__)

#: Least share of a derived resource's fields (with values) that must be matched.
MIN_FIELD_SHARE = 0.75
#: Fewest matched fields: one shared column is a join, not a copy.
MIN_MATCHED_FIELDS = 2
#: Candidates scoring within this of the best one are kept too.
TIE = 0.02
#: Fewest of a field's hashes an estimate may rest on.
MIN_SAMPLE = 8
#: Least containment of every matched field, and least row ratio, of a COPY edge.
COPY_CONTAINMENT = 0.95
COPY_ROW_RATIO = 0.95
#: Edge kinds (``evidence.kind``).
COPY, SUBSET, PROJECTION, DERIVED = "COPY", "SUBSET", "PROJECTION", "DERIVED"

_DERIVED_TYPES = frozenset({ResourceType.FILE.value, ResourceType.HDFS_FILE.value,
                            ResourceType.COLLECTION.value})
_SQL_TYPES = frozenset({ResourceType.TABLE.value, ResourceType.VIEW.value})
_NUMBERS = frozenset({"LONG", "DOUBLE"})
_TIMES = frozenset({"DATE", "TIMESTAMP"})
_SCALARS = _NUMBERS | _TIMES | {"STRING", "BOOLEAN"}


_NONE = np.zeros(0, np.int64)


def compatible(one: str, two: str) -> bool:
    """Whether fields of these data types may hold the same values.

    Equal types; numbers with numbers; dates with timestamps; and text with any scalar, since a
    CSV column of numbers or dates may be typed as text on the other side (the sketches
    normalise values, so ``7`` and ``"7"`` agree).

    >>> compatible("STRING", "LONG"), compatible("LONG", "DATE")
    (True, False)
    """
    if one == two:
        return True
    if (one in _NUMBERS and two in _NUMBERS) or (one in _TIMES and two in _TIMES):
        return True
    return "STRING" in (one, two) and one in _SCALARS and two in _SCALARS


@dataclass
class Field:
    """One sketched field of a candidate resource."""

    resource: str
    name: str
    data_type: str
    distinct: float
    hashes: np.ndarray
    threshold: int


@dataclass
class Resource:
    """A candidate resource of file lineage."""

    key: str
    path: str
    resource_type: str
    rows: int | None
    changed: int | None
    fields: list[Field] = field(default_factory=list)

    @property
    def derivable(self) -> bool:
        return self.resource_type in _DERIVED_TYPES


@dataclass
class Candidate:
    """Why ``upstream`` may be the source of ``downstream``."""

    upstream: Resource
    downstream: Resource
    matches: dict[str, tuple[str, float]]
    derived_fields: int
    score: float
    direction: str

    def row_ratio(self) -> float | None:
        """Downstream rows over upstream rows, when both are known."""
        rows = (self.downstream.rows, self.upstream.rows)
        return rows[0] / rows[1] if rows[0] is not None and rows[1] else None

    def edge(self) -> EdgeRecord:
        """The edge to store, with its evidence and field lineage in the derived field order."""
        containments = [c for _, c in self.matches.values()]
        rows = (self.downstream.rows, self.upstream.rows)
        ratio = self.row_ratio()
        order = [f.name for f in self.downstream.fields if f.name in self.matches]
        return EdgeRecord(
            upstream_key=self.upstream.key, downstream_key=self.downstream.key,
            lineage_type=INFERRED, score=round(self.score, 4),
            field_lineage=[{"downstreamField": name, "upstreamFields": [self.matches[name][0]]}
                           for name in order],
            evidence={
                "method": "sketchContainment",
                "matchedFields": len(self.matches),
                "derivedFields": self.derived_fields,
                "fieldShare": round(len(self.matches) / self.derived_fields, 4),
                "meanContainment": round(sum(containments) / len(containments), 4),
                "rowRatio": round(ratio, 4) if ratio is not None else None,
                "upstreamRows": rows[1], "downstreamRows": rows[0],
                "unmatchedFields": [f.name for f in self.downstream.fields
                                    if f.name not in self.matches and len(f.hashes)],
                "direction": self.direction,
                "kind": kind_of(self),
            },
        )


def one_to_one(candidate: Candidate) -> bool:
    """Whether every field with values on either side is matched, each upstream field once."""
    upstream = {f.name for f in candidate.upstream.fields if len(f.hashes)}
    hosts = [host for host, _ in candidate.matches.values()]
    return _all_distinct(candidate) and set(hosts) >= upstream


def _all_distinct(candidate: Candidate) -> bool:
    """Whether every derived field with values is matched, each by a field of its own."""
    hosts = [host for host, _ in candidate.matches.values()]
    return len(candidate.matches) == candidate.derived_fields and len(set(hosts)) == len(hosts)


def kind_of(candidate: Candidate) -> str:
    """``COPY``, ``SUBSET``, ``PROJECTION`` or ``DERIVED`` (see the module docstring)."""
    if not _all_distinct(candidate) or min(
            c for _, c in candidate.matches.values()) < COPY_CONTAINMENT:
        return DERIVED
    if not one_to_one(candidate):
        return PROJECTION
    ratio = candidate.row_ratio()
    # Unknown row counts: the sketches alone cannot tell a copy from a subset; full
    # containment of every field is read as a copy.
    return COPY if ratio is None or ratio >= COPY_ROW_RATIO else SUBSET


def _field(resource: str, row: Mapping[str, Any]) -> Field | None:
    stored = row["sketch"]
    if isinstance(stored, ValueSketch):
        sketch = stored
    else:
        try:
            # Without the raw sample: rebuilding its map re-hashes every sample value, and
            # lineage needs only the hashes.
            sketch = ValueSketch.from_dict(stored, with_sample=False)
        except (ValueError, KeyError, TypeError):
            return None  # a sketch of another algorithm, or damaged: nothing to compare
    properties = row.get("properties") or {}
    distinct = properties.get("distinctCount")
    estimate = float(distinct) if isinstance(distinct, int | float) else sketch.distinct_count()
    return Field(resource, str(row["name"]), str(row["data_type"]), estimate, sketch.hashes,
                 sketch.threshold)


def load(rows: Iterable[Mapping[str, Any]]) -> list[Resource]:
    """Candidate resources from rows ``key, path, resource_type, row_count,
    time_of_resource_change, fields`` (``fields``: ``name, data_type, properties, sketch``, the
    sketch stored or decoded)."""
    found = []
    for row in rows:
        resource = Resource(str(row["key"]), str(row["path"]), str(row["resource_type"]),
                            row["row_count"], row["time_of_resource_change"])
        resource.fields = [f for f in (_field(resource.key, r) for r in row["fields"])
                           if f is not None]
        found.append(resource)
    return found


def from_index(index: SketchIndex) -> list[Resource]:
    """The candidate resources held by the sketch index: current (not MISSING) files,
    collections, tables and views profiled without error, never a collection's member."""
    rows = [
        {**resource.row, "fields": [f for f in resource.fields if f["sketch"] is not None]}
        for resource in index.resources.values()
        if resource.row["resource_type"] in _DERIVED_TYPES | _SQL_TYPES
        and resource.row["status"] != "MISSING" and resource.row["collection_key"] is None
        and resource.row["resource_state"] == "OK"
    ]
    rows.sort(key=lambda r: (r["data_source_key"], r["path"]))
    return load(rows)


def direction(upstream: Resource, downstream: Resource) -> str | None:
    """How ``upstream`` is known to be older than ``downstream`` (None: it is not)."""
    if upstream.changed is not None and downstream.changed is not None:
        return "time" if upstream.changed < downstream.changed else None
    if upstream.resource_type in _SQL_TYPES and upstream.changed is None:
        return "databaseExport"
    return None


class Inference:
    """File lineage over one snapshot of the catalog's candidates.

    The hashes of every field with at least ``min_distinct`` distinct values go into one sorted
    array (with the field each came from). For one such field of a derived resource, binary
    searches find every occurrence of its hashes in that array at once, and counting the owning
    fields gives its shared hashes with each field that shares any; the containment estimates
    follow from those counts and the sketches' thresholds exactly as
    :meth:`ValueSketch.containment_in` computes them. So a derived resource costs a few vector
    operations per field, proportional to what it shares, never a comparison per pair. A field
    with fewer distinct values (a flag, a status, every field of a one-object JSON document)
    pairs only with fields of the same name, so it is looked up by name: its few values are
    found almost everywhere, and looking them up by hash would pair it with every field of
    the catalog.
    """

    def __init__(self, resources: Sequence[Resource], min_containment: float,
                 min_distinct: int) -> None:
        # Resources without sketched fields can be neither side (and would make empty segments).
        self.resources = [r for r in resources if r.fields]
        self.min_containment = min_containment
        self.min_distinct = min_distinct
        self.fields = [f for r in self.resources for f in r.fields]
        self._index = {r.key: i for i, r in enumerate(self.resources)}
        self.owner = np.array([i for i, r in enumerate(self.resources) for _ in r.fields],
                              dtype=np.int64)
        self.thresholds = np.array([f.threshold for f in self.fields], dtype=np.uint64)
        self.rich = np.array([f.distinct >= min_distinct for f in self.fields], dtype=bool)
        types = [f.data_type for f in self.fields]
        self.compatible = {t: np.array([compatible(t, o) for o in types], dtype=bool)
                           for t in set(types)}
        self.by_name: dict[str, list[int]] = defaultdict(list)
        for position, item in enumerate(self.fields):
            self.by_name[item.name.casefold()].append(position)
        rich = [i for i in np.flatnonzero(self.rich).tolist() if len(self.fields[i].hashes)]
        every = (np.concatenate([self.fields[i].hashes for i in rich]) if rich
                 else np.zeros(0, np.uint64))
        ids = np.repeat(np.array(rich, dtype=np.int64),
                        [len(self.fields[i].hashes) for i in rich])
        order = np.argsort(every, kind="stable")
        self.hashes = every[order]
        self.hash_field = ids[order]

    def _sharing(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The fields of many values holding any of ``hashes``, and how many each holds."""
        left = np.searchsorted(self.hashes, hashes, side="left")
        right = np.searchsorted(self.hashes, hashes, side="right")
        lengths = right - left
        ends = np.cumsum(lengths)
        positions = (np.arange(int(lengths.sum())) - np.repeat(ends - lengths, lengths)
                     + np.repeat(left, lengths))
        owners = self.hash_field[positions]
        if len(owners) * 8 < len(self.fields):
            ids, hits = np.unique(owners, return_counts=True)
            return ids, hits
        # Many hits: counting into one slot per field beats sorting them.
        counts = np.bincount(owners, minlength=len(self.fields))
        ids = np.flatnonzero(counts)
        return ids, counts[ids]

    def _named(self, item: Field, ids: np.ndarray, hits: np.ndarray, few_only: bool,
               owner: int) -> tuple[np.ndarray, np.ndarray]:
        """``ids`` and ``hits`` plus the fields of resources other than ``owner`` named like
        ``item`` (of few values only, when ``few_only``: those of many are found by hash
        already) and their shared hashes."""
        named = [i for i in self.by_name.get(item.name.casefold(), ())
                 if not (few_only and self.rich[i]) and self.owner[i] != owner]
        if not named:
            return ids, hits
        theirs = [self.fields[i].hashes for i in named]
        slot = np.repeat(np.arange(len(named)), [len(h) for h in theirs])
        found = np.isin(np.concatenate(theirs), item.hashes)
        shared = np.bincount(slot[found], minlength=len(named))
        return (np.concatenate([ids, np.array(named, dtype=np.int64)]),
                np.concatenate([hits, shared.astype(np.int64)]))

    def _hosts(self, item: Field, derived_index: int) -> tuple[np.ndarray, np.ndarray]:
        """The fields of other resources that contain ``item``'s values (compatible types, the
        same name when either side has few values), and the containment in each."""
        ids, hits = (self._sharing(item.hashes) if item.distinct >= self.min_distinct
                     else (_NONE, _NONE))
        ids, hits = self._named(item, ids, hits, item.distinct >= self.min_distinct,
                                derived_index)
        if not len(ids):
            return ids, np.zeros(0)
        limits = np.minimum(self.thresholds[ids], np.uint64(item.threshold))
        samples = np.searchsorted(item.hashes, limits, side="right")
        shares = _shares(hits, samples)
        allowed = self.compatible.get(item.data_type)
        ok = ((shares >= self.min_containment) & (samples >= min(MIN_SAMPLE, len(item.hashes)))
              & (self.owner[ids] != derived_index)
              & (allowed[ids] if allowed is not None
                 else np.array([compatible(item.data_type, self.fields[i].data_type)
                                for i in ids.tolist()], dtype=bool)))
        return ids[ok], shares[ok]

    def _best_field(self, item: Field, hosts: list[tuple[int, float]]) -> tuple[str, float]:
        """The host that best contains ``item``'s values: the highest containment, then the
        same name, then the closest distinct count."""
        def rank(host: tuple[int, float]) -> tuple[float, int, float]:
            other = self.fields[host[0]]
            same_name = other.name.casefold() == item.name.casefold()
            closeness = -abs(math.log((other.distinct + 1) / (item.distinct + 1)))
            return (host[1], int(same_name), closeness)

        best = max(hosts, key=rank)
        return self.fields[best[0]].name, best[1]

    def _sources_of(self, derived_index: int) -> list[Candidate]:
        """Every candidate source of the resource at ``derived_index``: enough of its fields
        contained in that source's fields, in a direction the two allow."""
        derived = self.resources[derived_index]
        valued = [f for f in derived.fields if len(f.hashes)]
        if len(valued) < MIN_MATCHED_FIELDS or not self.fields:
            return []
        needed = max(MIN_MATCHED_FIELDS, math.ceil(MIN_FIELD_SHARE * len(valued) - 1e-9))
        # source resource -> derived field -> [(host field, containment)]
        hosts: dict[int, dict[str, list[tuple[int, float]]]] = defaultdict(dict)
        for item in valued:
            ids, shares = self._hosts(item, derived_index)
            for host, share in zip(ids.tolist(), shares.tolist(), strict=True):
                hosts[int(self.owner[host])].setdefault(item.name, []).append((host, share))
        found = []
        for index in sorted(hosts):
            if len(hosts[index]) < needed:
                continue
            source = self.resources[index]
            how = direction(source, derived)
            if how is None:
                continue
            if derived.rows is not None and source.rows is not None and derived.rows > source.rows:
                continue
            matches = {item.name: self._best_field(item, hosts[index][item.name])
                       for item in valued if item.name in hosts[index]}
            anchored = any(f.distinct >= self.min_distinct for f in valued if f.name in matches)
            if not anchored and not self._small_copy(source, derived, matches):
                continue
            share = len(matches) / len(valued)
            mean = sum(c for _, c in matches.values()) / len(matches)
            found.append(Candidate(source, derived, matches, len(valued), share * mean, how))
        return found

    @staticmethod
    def _small_copy(source: Resource, derived: Resource,
                    matches: Mapping[str, tuple[str, float]]) -> bool:
        """Whether a resource of few distinct values per field (a lookup table of five rows)
        is a whole copy of ``source``: as many rows, every field of both matched by name with
        every value contained. Few values are found almost anywhere; the same names, the
        same row count and all the fields together are what make it the same table."""
        if derived.rows is None or derived.rows != source.rows or not derived.rows:
            return False
        theirs = {f.name.casefold() for f in source.fields if len(f.hashes)}
        mine = {f.name.casefold() for f in derived.fields if len(f.hashes)}
        return (mine == theirs and len(matches) == len(mine)
                and all(host.casefold() == name.casefold() and share >= 1.0
                        for name, (host, share) in matches.items()))

    def candidates(self, only: Collection[str] | None = None) -> list[Candidate]:
        """The best candidate sources of every derivable resource (ties kept); with ``only``,
        of those resources alone (keys)."""
        kept: list[Candidate] = []
        for index, derived in enumerate(self.resources):
            if not derived.derivable or (only is not None and derived.key not in only):
                continue
            found = self._sources_of(index)
            if not found:
                continue
            best = max(c.score for c in found)
            kept.extend(c for c in found if c.score >= best - TIE)
        return kept

    def reachable(self, changed: Collection[str]) -> set[str]:
        """The derivable resources that ``changed`` resources may be a source of: the changed
        ones themselves, and those with enough fields matched in a changed resource's fields
        (the field rule of :meth:`_hosts`, applied from the changed side: a changed field's
        hashes find the fields sharing any, its name those of few values), so the rest of the
        catalog is never compared.
        """
        found = {r.key for r in self.resources if r.key in changed and r.derivable}
        matched: dict[int, set[int]] = defaultdict(set)
        for host in (f for r in self.resources if r.key in changed for f in r.fields):
            if not len(host.hashes):
                continue
            ids, hits = (self._sharing(host.hashes) if host.distinct >= self.min_distinct
                         else (_NONE, _NONE))
            ids, hits = self._named(host, ids, hits, host.distinct >= self.min_distinct,
                                    self._index[host.resource])
            for position, shared in zip(ids.tolist(), hits.tolist(), strict=True):
                item = self.fields[position]
                below = int(np.searchsorted(item.hashes, min(item.threshold, host.threshold),
                                            side="right"))
                if (shared >= self.min_containment * below > 0
                        and below >= min(MIN_SAMPLE, len(item.hashes))
                        and compatible(item.data_type, host.data_type)):
                    matched[int(self.owner[position])].add(position)
        for index, positions in matched.items():
            resource = self.resources[index]
            if not resource.derivable or resource.key in changed:
                continue
            valued = sum(1 for f in resource.fields if len(f.hashes))
            needed = max(MIN_MATCHED_FIELDS, math.ceil(MIN_FIELD_SHARE * valued - 1e-9))
            if valued >= MIN_MATCHED_FIELDS and len(positions) >= needed:
                found.add(resource.key)
        return found


def _shares(hits: np.ndarray, samples: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(samples > 0, hits / np.maximum(samples, 1), 0.0)


def _ancestors(start: str, parents: Mapping[str, Iterable[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for parent in parents.get(todo.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return seen


def direct_only(candidates: Sequence[Candidate],
                factual: Iterable[tuple[str, str]]) -> list[Candidate]:
    """Drop a candidate source that is upstream of another kept source of the same resource
    (through kept candidates or FACTUAL edges), so each edge is a direct derivation."""
    parents: dict[str, set[str]] = defaultdict(set)
    for up, down in factual:
        parents[down].add(up)
    for c in candidates:
        parents[c.downstream.key].add(c.upstream.key)
    by_derived: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        by_derived[c.downstream.key].append(c)
    kept = []
    for group in by_derived.values():
        sources = {c.upstream.key for c in group}
        direct = [c for c in group
                  if not any(c.upstream.key in _ancestors(o, parents)
                             for o in sources - {c.upstream.key})]
        # Sources upstream of each other both ways (a cycle) would drop them all: keep the best.
        kept.extend(direct or [max(group, key=lambda c: c.score)])
    return kept


def infer(store: Store, settings: Settings, changed: Set[str] | None = None) -> StepReport:
    """Infer the catalog's INFERRED edges from the sketches and store them: all of them
    (``changed`` is None: a DISCOVER job), or only the edges into the resources the
    ``changed`` ones may now be a source of, or were (what a PROFILE job ends with; see
    :meth:`Inference.reachable`). Every other stored edge stays."""
    with index_for(store).held() as index:
        with store.read() as conn:
            index.sync(conn)
            factual = lineage_store.edge_pairs(conn, FACTUAL)
            stored = lineage_store.edge_pairs(conn, INFERRED) if changed is not None else []
        resources = from_index(index)
    inference = Inference(resources, settings.lineage_min_containment,
                          settings.join_min_distinct)
    if changed is None:
        edges = [c.edge() for c in direct_only(inference.candidates(), factual)]
        with store.write() as conn:
            count = lineage_store.replace_edges(conn, INFERRED, edges)
        summary = f"File lineage: {count} inferred edges." if resources else ""
        return StepReport(counts={"inferredEdges": count}, summary=summary)
    known = {r.key for r in inference.resources}
    # Edges from or into a changed resource, or naming one that is no longer a candidate.
    redo = inference.reachable(changed) | {
        down for up, down in stored if up in changed or up not in known or down in changed
        or down not in known}
    others = [(up, down) for up, down in stored if down not in redo]
    found = direct_only(inference.candidates(redo), [*factual, *others])
    edges = [c.edge() for c in found]
    with store.write() as conn:
        count = lineage_store.replace_edges_into(conn, INFERRED, edges, redo)
    summary = (f"File lineage: {count} inferred edges into {len(redo)} resource(s) the "
               f"changed ones may feed." if redo else "")
    # Both ends of every edge rewritten, old or new: join discovery merges copies, so their
    # conditions follow the edges.
    touched = redo | {up for up, down in stored if down in redo} | {
        e.upstream_key for e in edges}
    return StepReport(counts={"inferredEdgesChanged": count}, summary=summary,
                      touched=touched - set(changed))
