"""Tag coverage: how much of the catalog is tagged, per data source, resource, domain and tag.

``tag_coverage(scope=)`` answers one long DataFrame; ``tag_graph(scope=)`` the bipartite
networkx graph of tags and the resources they tag. Both read the resources of the scope with
their fields (``GET /dataresource/metadata``) and the tag associations (``GET
/tagassociation``), page by page; only associations in the given ``states`` (ACCEPTED by
default) count as tagging. Draw them with
:func:`catalog_nb.notebook.drawing.draw_tag_coverage` and
:func:`~catalog_nb.notebook.drawing.draw_tag_graph`.

Example::

    cov = cat.tag_coverage("demo_files")
    cov.query("level == 'source'")[["name", "fields", "tagged_fields", "share"]]
    g = cat.tag_graph()
    [n for n, kind in g.nodes(data="kind") if kind == "tag"]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import pandas as pd

from catalog_nb.client.frames import to_frame
from catalog_nb.client.paging import read_pages
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.relations.frames import COVERAGE_COLUMNS, Scope, ScopeRef, resolve_scope
from catalog_nb.client.resources.frames import short_type
from catalog_nb.client.tags.associations import association_state, read_associations
from catalog_nb.client.tags.frames import association_tag_name

__all__ = ["CoverageMixin", "coverage_rows", "tag_graph_from"]

#: Resource keys per metadata request when the scope is a list of keys (keeps URLs short).
_KEYS_PER_REQUEST = 100


@dataclass
class _Tagging:
    """Which fields of one resource a tag covers, and whether it tags the resource itself."""

    fields: set[str] = field(default_factory=set)
    resource_level: bool = False


def _states(states: str | Iterable[str]) -> set[str]:
    values = [states] if isinstance(states, str) else list(states)
    if not values:
        raise ValueError("states must name at least one association state")
    return {association_state(value) for value in values}


def _index(
    resources: Sequence[Mapping[str, Any]], associations: Iterable[Mapping[str, Any]]
) -> dict[str, dict[str, _Tagging]]:
    """resource key -> tag full name -> :class:`_Tagging`, for resources of the scope; field
    associations naming a field the resource does not list are ignored."""
    names = {str(r["key"]): {str(f.get("name")) for f in r.get("fields") or []} for r in resources}
    index: dict[str, dict[str, _Tagging]] = defaultdict(dict)
    for view in associations:
        key = str(view.get("resourceKey"))
        tag = association_tag_name(view)
        if key not in names or tag is None:
            continue
        entry = index[key].setdefault(tag, _Tagging())
        field_name = view.get("field") or None
        if field_name is None:
            entry.resource_level = True
        elif field_name in names[key]:
            entry.fields.add(str(field_name))
    return index


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def coverage_rows(
    resources: Sequence[Mapping[str, Any]],
    associations: Iterable[Mapping[str, Any]],
    domains: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The rows of :meth:`CoverageMixin.tag_coverage` from resource JSON (with ``fields``)
    and TagAssociationView JSON (already filtered by state).

    ``domains`` maps tag full names to their domain (else the part before the first dot).
    """
    associations = list(associations)
    index = _index(resources, associations)
    domain_of = dict(domains or {})
    for view in associations:
        tag = association_tag_name(view)
        if tag is not None and view.get("domainName"):
            domain_of.setdefault(tag, str(view["domainName"]))
    total_fields = sum(len(r.get("fields") or []) for r in resources)
    rows: list[dict[str, Any]] = []
    per_source: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    per_group: dict[tuple[str, str], tuple[set[tuple[str, str]], set[str]]] = {}
    for resource in resources:
        key, source = str(resource["key"]), str(resource.get("dataSourceName"))
        field_count = len(resource.get("fields") or [])
        taggings = index.get(key, {})
        tagged: set[str] = set().union(*(t.fields for t in taggings.values()))
        is_tagged = bool(taggings)
        rows.append(
            {
                "level": "resource",
                "name": resource.get("resourcePath"),
                "source": source,
                "fields": field_count,
                "tagged_fields": len(tagged),
                "share": _share(len(tagged), field_count),
                "resources": 1,
                "tagged_resources": int(is_tagged),
                "resource_share": float(is_tagged),
                "key": key,
            }
        )
        counts = per_source[source]
        counts[0] += field_count
        counts[1] += len(tagged)
        counts[2] += 1
        counts[3] += int(is_tagged)
        for tag, tagging in taggings.items():
            domain = domain_of.get(tag, tag.split(".", 1)[0])
            for group in (("domain", domain), ("tag", tag)):
                found, owners = per_group.setdefault(group, (set(), set()))
                found.update((key, f) for f in tagging.fields)
                owners.add(key)
    for source, (fields, tagged_fields, count, tagged_count) in sorted(per_source.items()):
        rows.append(
            {
                "level": "source",
                "name": source,
                "source": source,
                "fields": fields,
                "tagged_fields": tagged_fields,
                "share": _share(tagged_fields, fields),
                "resources": count,
                "tagged_resources": tagged_count,
                "resource_share": _share(tagged_count, count),
                "key": None,
            }
        )
    for (level, name), (found, owners) in sorted(per_group.items()):
        rows.append(
            {
                "level": level,
                "name": name,
                "source": None,
                "fields": total_fields,
                "tagged_fields": len(found),
                "share": _share(len(found), total_fields),
                "resources": len(resources),
                "tagged_resources": len(owners),
                "resource_share": _share(len(owners), len(resources)),
                "key": None,
            }
        )
    order = {"source": 0, "resource": 1, "domain": 2, "tag": 3}
    rows.sort(key=lambda r: (order[r["level"]], str(r["source"] or ""), str(r["name"])))
    return rows


def tag_graph_from(
    resources: Sequence[Mapping[str, Any]], associations: Iterable[Mapping[str, Any]]
) -> nx.Graph:
    """The bipartite graph of :meth:`CoverageMixin.tag_graph` from the same inputs as
    :func:`coverage_rows`."""
    associations = list(associations)
    index = _index(resources, associations)
    graph = nx.Graph()
    tag_info: dict[str, dict[str, Any]] = {}
    for view in associations:
        tag = association_tag_name(view)
        if tag is not None and tag not in tag_info:
            tag_info[tag] = {"key": view.get("tagKey"), "domain": view.get("domainName")}
    for resource in resources:
        key = str(resource["key"])
        taggings = index.get(key)
        if not taggings:
            continue
        graph.add_node(
            key,
            kind="resource",
            bipartite=1,
            name=resource.get("name"),
            path=resource.get("resourcePath"),
            source=resource.get("dataSourceName"),
            resource_type=short_type(resource.get("resourceType")),
            field_count=len(resource.get("fields") or []),
        )
        for tag, tagging in taggings.items():
            if tag not in graph:
                info = tag_info.get(tag, {})
                graph.add_node(
                    tag,
                    kind="tag",
                    bipartite=0,
                    name=tag,
                    key=info.get("key"),
                    domain=info.get("domain") or tag.split(".", 1)[0],
                )
            graph.add_edge(
                tag,
                key,
                fields=sorted(tagging.fields),
                resource_level=tagging.resource_level,
                weight=len(tagging.fields) + int(tagging.resource_level),
            )
    return graph


class CoverageMixin(CatalogPart):
    """Tag coverage frames and graphs; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    def _coverage_inputs(
        self, scope: ScopeRef, states: str | Iterable[str]
    ) -> tuple[Scope, list[dict[str, Any]], list[dict[str, Any]]]:
        wanted = _states(states)
        where = resolve_scope(self.api, scope)
        resources = self._scope_resources(where)
        one_state = next(iter(wanted)) if len(wanted) == 1 else None
        views, _ = read_associations(
            self.api,
            state=one_state,
            source_key=where.source_key,
            progress=self.progress,
            caller="tag coverage",
        )
        keys = {str(r["key"]) for r in resources}
        chosen = [
            v for v in views if v.get("state") in wanted and str(v.get("resourceKey")) in keys
        ]
        return where, resources, chosen

    def _scope_resources(self, where: Scope) -> list[dict[str, Any]]:
        """The resource JSON (with fields) of every resource in ``where``, but a collection's
        members."""
        filters: list[list[str]] = []
        if where.keys is not None:
            keys = sorted(where.keys)
            if not keys:
                return []
            filters = [
                ["id:" + ";".join(keys[i : i + _KEYS_PER_REQUEST])]
                for i in range(0, len(keys), _KEYS_PER_REQUEST)
            ]
        elif where.source_name is not None:
            filters = [["data_source:" + where.source_name]]
        else:
            filters = [[]]
        records: list[dict[str, Any]] = []
        for property_filters in filters:

            def fetch(
                start: int, size: int, _cursor: str | None, pf: list[str] = property_filters
            ) -> Any:
                return self.api.resource_metadata(
                    pf, views=["viewFields"], start=start, page_size=size
                )

            found, _ = read_pages(
                fetch, page_size=500, limit=None, progress=self.progress, description="resources"
            )
            # a collection's member files carry no fields of their own: the collection counts
            records.extend(r for r in found if not r.get("collectionKey"))
        return records

    def tag_coverage(
        self, scope: ScopeRef = None, *, states: str | Iterable[str] = "ACCEPTED"
    ) -> pd.DataFrame:
        """Tagged share of fields and resources, in long form over four levels.

        ``level`` and ``name``: ``source`` (a data source), ``resource`` (its path; ``key``
        holds the resource key), ``domain`` (a tag domain) and ``tag`` (a tag's full name)
        rows. ``fields`` counts the fields of the scope's resources (of that source or
        resource; the whole scope for domain and tag rows), ``tagged_fields`` those with at
        least one tag (of that domain or tag), ``share`` = tagged_fields / fields (0-1,
        missing without fields); ``resources``, ``tagged_resources`` (tagged on the resource
        or on any field) and ``resource_share`` likewise (a collection counts once, its member
        files are not counted apart). Domains and tags appear when they
        tag something in scope. ``states``: which association states count (``"ACCEPTED"``;
        e.g. ``["ACCEPTED", "SUGGESTED"]`` to include discovery's suggestions).

        Example::

            cov = cat.tag_coverage()
            cov[cov.level == "resource"].sort_values("share").head(10)
        """
        _, resources, views = self._coverage_inputs(scope, states)
        domains = {
            str(t["fullName"]): str(t.get("domainName"))
            for t in self.api.list_tags()
            if t.get("fullName")
        }
        return to_frame(coverage_rows(resources, views, domains), COVERAGE_COLUMNS)

    def tag_graph(
        self, scope: ScopeRef = None, *, states: str | Iterable[str] = "ACCEPTED"
    ) -> nx.Graph:
        """The bipartite graph of tags and the resources of ``scope`` they tag.

        Tag nodes are keyed by full name (``kind="tag"``, ``bipartite=0``, key, domain);
        resource nodes by resource key (``kind="resource"``, ``bipartite=1``, name, path,
        source, resource_type, field_count). Edge attributes: ``fields`` (the tagged field
        names), ``resource_level`` (the resource itself carries the tag) and ``weight`` (the
        tagged field count, plus one for the resource itself). Untagged resources are left out.

        Example::

            g = cat.tag_graph("demo_files")
            g.degree("Sensitive.EmailAddress")
        """
        _, resources, views = self._coverage_inputs(scope, states)
        return tag_graph_from(resources, views)
