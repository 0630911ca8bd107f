"""Tag discovery writes its suggestions in bounded transactions and refreshes a resource's search
document once per job, not once per suggestion (a wide file used to hold the store's write lock
for minutes while its index was rebuilt for every field)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from catalog_nb.server.discovery import runner
from catalog_nb.server.store import associations, search
from tests.conftest import Server
from tests.server.source_helpers import create_source, run_job

FIELDS = 300
BATCH = 40


def test_a_wide_file_is_suggested_in_batches_with_one_index_refresh(
    make_server: Callable[..., Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    header = ",".join(f"mail_{i}" for i in range(FIELDS))
    rows = "\n".join(",".join(f"p{r}.{i}@example.com" for i in range(FIELDS)) for r in range(30))
    (lake / "wide.csv").write_text(f"{header}\n{rows}\n")
    # The counters below patch discovery: its jobs run in this process.
    server = make_server(data_roots=[lake], job_isolation="thread")
    http = server.session()

    refreshed: Counter[str] = Counter()
    real_refresh = search.refresh

    def counting_refresh(conn: Any, keys: Iterable[str]) -> None:
        keys = list(keys)
        refreshed.update(keys)
        real_refresh(conn, keys)

    # [connection, suggestions written on it] per transaction, in order; holding each
    # connection keeps its identity from being reused by the next one.
    transactions: list[list[Any]] = []
    real_suggest = associations.record_suggestions

    def counting_suggest(conn: Any, key: str, suggestions: Iterable[Any]) -> Any:
        suggestions = list(suggestions)
        if not transactions or transactions[-1][0] is not conn:
            transactions.append([conn, 0])
        transactions[-1][1] += len(suggestions)
        return real_suggest(conn, key, suggestions)

    monkeypatch.setattr(search, "refresh", counting_refresh)
    monkeypatch.setattr(runner, "record_suggestions", counting_suggest)
    monkeypatch.setattr(runner, "WRITE_BATCH", BATCH)

    source = create_source(http, "wide", "FILE", str(lake))
    job = run_job(http, source["key"], "PROFILE")
    created = job["counts"]["suggestionsCreated"]
    # Every field is an e-mail address; under load a regular expression may time out on a
    # field or two (reported, not suggested), so only "enough for several batches" is certain.
    assert created > 3 * BATCH
    resource = next(r for r in http.get("/dataresource/metadata").json()["list"]
                    if r["name"] == "wide.csv")
    # Browsing, profiling and discovery index the resource once each: never once per suggestion.
    assert 1 <= refreshed[resource["key"]] <= 3, refreshed[resource["key"]]
    sizes = [count for _, count in transactions]
    assert max(sizes) <= BATCH
    assert sum(sizes) == created
    assert len(sizes) >= created / BATCH
    # The index holds what was suggested: a search by the tag's name finds the resource.
    found = http.post("/search/new", json={"searchPhrase": "wide"}).json()
    assert found["totalResultCount"] == 1
