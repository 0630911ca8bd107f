"""A mocked search service for client and widget tests.

:class:`FakeSearch` answers ``/search/new``, ``/search/runFacet``, ``/search/page`` and
``/search/facets`` from a list of resources, the way ``docs/search-api.md`` describes: words
must all appear in name or path, facets are ORed within and ANDed across, each facet's counts
are computed over the matches of the phrase and of the *other* facets' selections, and pages
are read from the stored order under the result's key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import responses

from tests.client.mocks import API, error_body
from tests.client.resource_mocks import resource_json

FACET_NAMES = {"dataSource": "Data source", "fileFormat": "File format", "tag": "Tag"}


def entity(index: int, *, tags: Sequence[str] = (), score: float = 1.0, **over: Any) -> dict:
    """A result entity: a DataResource core view with tags and a score."""
    record = resource_json(index, **over)
    record["score"] = score
    record["tagAssociationViewList"] = [
        {"tagFullName": name, "tagName": name.rsplit(".", 1)[-1], "field": None,
         "state": "ACCEPTED"}
        for name in tags
    ]
    return record


def _facet_values(record: dict[str, Any], facet: str) -> list[str]:
    if facet == "dataSource":
        return [str(record["dataSourceName"])]
    if facet == "fileFormat":
        return [str(record.get("fileFormat"))]
    views = record.get("tagAssociationViewList") or []
    return list(dict.fromkeys(str(v["tagFullName"]) for v in views))


class FakeSearch:
    """The search endpoints over ``records``; every body received is kept in ``bodies``."""

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        self.records = list(records)
        self.stored: dict[str, list[dict[str, Any]]] = {}
        self.bodies: list[tuple[str, dict[str, Any]]] = []
        #: When set, the next call of that path answers ``(status, body)``.
        self.fail: dict[str, tuple[int, dict[str, Any]]] = {}

    def install(self, mock: responses.RequestsMock) -> FakeSearch:
        for path in ("/search/new", "/search/runFacet", "/search/page"):
            mock.add_callback(
                responses.POST, API + path, callback=self._answer(path),
                content_type="application/json",
            )
        catalogue = {"DATA_RESOURCE": [
            {"facetName": name, "displayName": display,
             "facetCategories": sorted({v for r in self.records for v in _facet_values(r, name)})}
            for name, display in FACET_NAMES.items()
        ]}
        mock.add(responses.GET, API + "/search/facets", json=catalogue)
        for record in self.records:
            mock.add(responses.GET, API + f"/dataresource/{record['key']}", json=record)
        return self

    def _matches(self, phrase: str, selections: dict[str, list[str]], skip: str | None) -> list:
        words = phrase.lower().split()
        found = []
        for record in self.records:
            text = f"{record['name']} {record['resourcePath']}".lower()
            if not all(word in text for word in words):
                continue
            if all(
                set(_facet_values(record, name)) & set(values)
                for name, values in selections.items()
                if name != skip
            ):
                found.append(record)
        return found

    def _answer(self, path: str) -> Callable[[Any], tuple[int, dict, str]]:
        def answer(request: Any) -> tuple[int, dict, str]:
            body = json.loads(request.body)
            self.bodies.append((path, body))
            if path in self.fail:
                status, error = self.fail.pop(path)
                return status, {}, json.dumps(error)
            if path == "/search/page":
                key = body.get("key") or f"s{len(self.stored)}"
                if key not in self.stored:
                    return 404, {}, json.dumps(error_body(404, "SEARCH_NOT_FOUND"))
                return 201, {}, json.dumps(self._page(key, self.stored[key], body, [], {}))
            phrase = body.get("searchPhrase") or ""
            selections = {s["facetName"]: s["facetCategories"] for s in body["facetSelections"]}
            unknown = set(selections) - set(FACET_NAMES)
            if unknown:
                message = f"Unknown facet {sorted(unknown)[0]}."
                return 400, {}, json.dumps(error_body(400, "INVALID_FACET", message))
            matched = self._matches(phrase, selections, None)
            key = f"s{len(self.stored) + 1}"
            self.stored[key] = matched
            facets = []
            for name, display in FACET_NAMES.items():
                counts: dict[str, int] = {}
                for record in self._matches(phrase, selections, name):
                    for value in _facet_values(record, name):
                        counts[value] = counts.get(value, 0) + 1
                facets.append({"name": name, "displayName": display,
                               "totalCount": sum(counts.values()), "categoryCounts": counts,
                               "selectedCategories": selections.get(name, [])})
            return 201, {}, json.dumps(self._page(key, matched, body, facets, body))

        return answer

    @staticmethod
    def _page(
        key: str, matched: list, body: dict, facets: list, criteria: dict
    ) -> dict[str, Any]:
        start = body["pagingCriteria"]["start"]
        size = body["pagingCriteria"]["size"]
        page = matched[start : start + size]
        return {
            "key": key, "searchPhrase": criteria.get("searchPhrase"), "facetResults": facets,
            "preFilters": [], "facetSelections": criteria.get("facetSelections", []),
            "entities": page, "matchedEntityCount": len(matched),
            "totalResultCount": len(matched), "responseEntityCount": len(page),
            "matchedKeys": [r["key"] for r in page], "start": start, "size": size,
            "facetGroups": [], "refDataResources": [],
        }


def lake(count: int = 5) -> list[dict[str, Any]]:
    """``count`` resources: even ones csv in demo_files tagged PII.Email, odd ones parquet."""
    return [
        entity(
            i,
            tags=["PII.Email"] if i % 2 == 0 else ["Finance.Revenue"],
            fileFormat="csv" if i % 2 == 0 else "parquet",
            name=f"{'customers' if i % 2 == 0 else 'orders'}{i:05d}.csv",
            score=1.0 / (i + 1),
        )
        for i in range(count)
    ]
