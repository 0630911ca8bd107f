"""Copies are lineage, not joins: join conditions merged over file lineage's copy edges.

File lineage (which runs before joins) marks each inferred edge with a kind; COPY, SUBSET and
PROJECTION edges link resources holding one table's rows (the same table as CSV, Parquet and
SQL; an extract; a projection). Their resources form *copy groups*. A condition between two
resources an inferred edge links is dropped, and the conditions between two copy groups on the
same columns (renamed columns of copies compared through the edges' field lineage) are kept
once per partner: in the partner's own data source where there is one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

from catalog_nb.server.discovery.file_lineage import COPY, PROJECTION, SUBSET
from catalog_nb.server.store.joins import NewCondition

#: Lineage edge kinds whose two resources hold one table (merged by :func:`merge_copies`).
COPY_KINDS = (COPY, SUBSET, PROJECTION)


def copy_groups(links: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Resource key -> the key naming its copy group (the smallest key of the group), for
    the resources linked by ``links`` (COPY, SUBSET and PROJECTION lineage edges: ``upstream``,
    ``downstream``)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for link in links:
        one, two = root(str(link["upstream"])), root(str(link["downstream"]))
        if one != two:
            parent[max(one, two)] = min(one, two)
    return {key: root(key) for key in parent}


def _column_names(links: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], tuple[str, str]]:
    """(resource, field) of a copy -> (resource, field) it was copied from, as far up as the
    links go: renamed columns of copies compare as one."""
    up: dict[tuple[str, str], tuple[str, str]] = {}
    for link in links:
        for item in link.get("field_lineage") or []:
            sources = item.get("upstreamFields") or []
            if len(sources) == 1:
                up[(str(link["downstream"]), str(item["downstreamField"]))] = (
                    str(link["upstream"]), str(sources[0]))
    resolved: dict[tuple[str, str], tuple[str, str]] = {}
    for start in up:
        seen = {start}
        current = up[start]
        while current in up and current not in seen:
            seen.add(current)
            current = up[current]
        resolved[start] = current
    return resolved


def _depths(links: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many copy edges separate each copy from its group's original (0 for the original)."""
    parents: dict[str, str] = {str(link["downstream"]): str(link["upstream"]) for link in links}
    found: dict[str, int] = {}
    for start in parents:
        hops, current, seen = 0, start, {start}
        while current in parents and parents[current] not in seen:
            current = parents[current]
            seen.add(current)
            hops += 1
        found[start] = hops
    return found


def merge_copies(conditions: Sequence[NewCondition], links: Sequence[Mapping[str, Any]],
                 sources: Mapping[str, str]) -> tuple[list[NewCondition], int]:
    """Discovered conditions with copies merged, and how many were dropped.

    Conditions between two copies of one table (resources of one copy group, see
    :func:`copy_groups`), or between any two resources an inferred lineage edge links (a
    derived file and its source), are lineage, not joins: dropped. Of the conditions between
    two copy groups on the same columns, one is kept per data source holding both groups (the
    best score, then the originals rather than their copies), and one for each source holding
    copies of one group only, with the partner in another source (``sources``: resource key
    -> data source key)."""
    if not links:
        return list(conditions), 0
    linked = {frozenset({str(link["upstream"]), str(link["downstream"])}) for link in links}
    links = [link for link in links if link.get("kind") in COPY_KINDS]
    group = copy_groups(links)
    names = _column_names(links)

    def side(key: str, cols: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        return group.get(key, key), tuple(
            names.get((key, col), (key, col))[1].casefold() for col in cols)

    kept: list[NewCondition] = []
    buckets: dict[frozenset[Any], list[NewCondition]] = defaultdict(list)
    for c in conditions:
        left, right = side(c.left_key, c.left_cols), side(c.right_key, c.right_cols)
        if left[0] == right[0] or frozenset({c.left_key, c.right_key}) in linked:
            continue
        if c.left_key not in group and c.right_key not in group:
            kept.append(c)
        else:
            buckets[frozenset({left, right})].append(c)
    depth = _depths(links)

    def rank(c: NewCondition) -> tuple[float, int, str, str]:
        # The best score; among equals, the originals rather than their copies.
        return (c.score, -depth.get(c.left_key, 0) - depth.get(c.right_key, 0), c.right_key,
                c.left_key)

    for bucket in buckets.values():
        partner_sources: dict[str, set[str]] = defaultdict(set)
        for c in bucket:
            for end in (c.left_key, c.right_key):
                partner_sources[group.get(end, end)].add(sources.get(end, ""))
        same: dict[str, list[NewCondition]] = defaultdict(list)
        for c in bucket:
            if sources.get(c.left_key) == sources.get(c.right_key):
                same[sources.get(c.left_key, "")].append(c)
        kept.extend(max(found, key=rank) for found in same.values())
        # A copy in a source holding no copy of the partner joins the partner elsewhere, once.
        elsewhere: dict[tuple[str, str], list[NewCondition]] = defaultdict(list)
        for c in bucket:
            for end, other in ((c.left_key, c.right_key), (c.right_key, c.left_key)):
                mine = sources.get(end, "")
                if mine not in same and mine not in partner_sources[group.get(other, other)]:
                    elsewhere[(group.get(end, end), mine)].append(c)
        kept.extend({id(c): c for c in (max(found, key=rank)
                                         for found in elsewhere.values())}.values())
    return kept, len(conditions) - len(kept)


def with_copies(changed: Set[str], links: Sequence[Mapping[str, Any]]) -> set[str]:
    """``changed`` and every copy of them: a copy group's conditions are merged together,
    so they are recomputed together."""
    group = copy_groups([link for link in links if link.get("kind") in COPY_KINDS])
    touched = {group[key] for key in changed if key in group}
    return set(changed) | {key for key, root in group.items() if root in touched}
