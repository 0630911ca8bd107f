"""Reading every page of a ``{list, totalCount}`` endpoint: cursors, bulk decoding, no GC.

:func:`read_pages` is the client's one paging loop. It follows the ``nextCursor`` of each page
where the service sends one (``GET /dataresource/metadata``: keyset paging, so no page is
skipped or read twice while the catalog changes, and page 100 costs the service what page 1
does), and pages by ``start`` where it does not, de-duplicated by key (new rows shift the
pages while reading). It shows a progress bar, stops at ``limit=`` and returns the total.

A metadata page of 1,000 resources is about 2.3 MB of JSON: the pages are decoded by orjson when
it is installed (:mod:`catalog_nb.client.http`), and Python's cyclic garbage collector is paused
while they are read (:func:`gc_paused`): JSON holds no reference cycles, and a collector walking
the millions of objects of 100,000 decoded resources again and again took more time than the
decoding itself.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["gc_paused", "link_cursor", "read_pages"]

_lock = threading.Lock()
_pausers = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block (reference counting still frees
    everything that is not in a cycle). Nested and concurrent blocks are counted: the collector
    comes back, if it was on, when the last one ends."""
    global _pausers, _was_enabled
    with _lock:
        if _pausers == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _was_enabled:
                gc.enable()


#: ``fetch(start, size, cursor)`` -> one page: ``{list, totalCount, nextCursor?}``, or the
#: undecoded HTTP response of one when :func:`read_pages` is given ``decode``.
Fetch = Callable[[int, int, "str | None"], Any]


def link_cursor(response: Any) -> str | None:
    """The ``cursor`` of the ``Link: <...>; rel="next"`` header of a metadata page (None when
    the service sends none), readable before the body is decoded."""
    links = getattr(response, "links", None) or {}
    url = links.get("next", {}).get("url")
    if not url:
        return None
    found = parse_qs(urlsplit(url).query).get("cursor")
    return found[0] if found else None


def read_pages(
    fetch: Fetch,
    *,
    page_size: int,
    limit: int | None,
    progress: bool,
    description: str,
    decode: Callable[[Any], Any] | None = None,
    keep: Callable[[Sequence[Any]], Sequence[Any]] | None = None,
) -> tuple[list[Any], int]:
    """Every record of a paged query (up to ``limit``), and the total that matched.

    ``fetch(start, size, cursor)`` reads one page: by ``cursor`` when it is given, else from
    ``start``. With ``decode``, ``fetch`` returns the undecoded response and the next page is
    requested (in a worker thread) as soon as its cursor is known from the ``Link`` header,
    while this one is decoded: the service builds page n + 1 while the client decodes page n.
    ``keep`` maps each page's records to what is kept of them (while the next page travels;
    for a page whose ``list`` is no plain list, such as an Arrow page's rows, whatever stands
    for them, one item per record). The pages' lists are joined once at the end, not record by
    record.
    """
    size = max(1, min(page_size, limit)) if limit is not None else max(1, page_size)
    pages: list[Sequence[Any]] = []
    count = 0
    offset = 0  # rows the service sent, repeats included: where a page by start begins
    seen: set[Any] | None = None  # keys, only when paging by start (rows may shift)
    bar: Any = None
    total = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="catalog-page") as pool:
        pending: Future[Any] = pool.submit(fetch, 0, size, None)
        try:
            while True:
                answer = pending.result()
                ahead = link_cursor(answer) if decode is not None else None
                if ahead is not None and (limit is None or count + size < limit):
                    pending = pool.submit(fetch, 0, size, ahead)
                else:
                    ahead = None
                page = decode(answer) if decode is not None else answer
                page = page if isinstance(page, Mapping) else {}
                listed = page.get("list") or []
                # A Sequence stays as it is: an Arrow page's rows are never taken apart here.
                items: Sequence[Any] = listed if isinstance(listed, Sequence) else list(listed)
                offset += len(items)
                cursor = page.get("nextCursor")
                if seen is not None or (cursor is None and "nextCursor" not in page):
                    seen = set() if seen is None else seen
                    items = _unseen(list(items), seen)
                pages.append(keep(items) if keep is not None else items)
                count += len(items)
                total = max(total, int(page.get("totalCount") or 0))
                target = total if limit is None else min(total, limit)
                if bar is None and progress and target > count:
                    from tqdm.auto import tqdm

                    bar = tqdm(total=target, desc=description, unit=" rows", leave=False)
                    bar.update(min(count, target))
                elif bar is not None:
                    bar.update(min(count, target) - bar.n)
                if ahead is not None:
                    continue  # the next page is on its way already
                if not page.get("list") or (count >= target and cursor is None):
                    break
                if limit is not None and count >= limit:
                    break
                if cursor is not None:
                    pending = pool.submit(fetch, 0, size, str(cursor))
                elif "nextCursor" in page or offset >= total:
                    break  # the service says this was the last page
                else:
                    pending = pool.submit(fetch, offset, size, None)
        finally:
            if bar is not None:
                bar.close()
    records = [record for items in pages for record in items]
    if limit is not None:
        records = records[:limit]
    return records, total


def _unseen(items: list[dict[str, Any]], seen: set[Any]) -> list[dict[str, Any]]:
    """``items`` whose key was not read yet (pages by ``start`` shift when rows come and go)."""
    fresh = []
    for item in items:
        key = item.get("key")
        if key is not None and key in seen:
            continue
        seen.add(key)
        fresh.append(item)
    return fresh
