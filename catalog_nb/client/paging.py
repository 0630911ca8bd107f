"""Reading every page of a ``{list, totalCount}`` endpoint, and saying so when it stops short.

The rules every family of the client follows for a long read live here, once:

* :func:`iter_pages` is the client's one paging loop (:func:`read_pages` gathers its pages);
* :func:`check_limit` is the one check of a ``limit=`` argument;
* :func:`progress_bar` is the one ``tqdm.auto`` bar of long reads and waits;
* :func:`warn_truncated` is the one :class:`~catalog_nb.client.errors.TruncatedResultWarning`
  (never truncate silently), pointed at the analyst's call by :func:`caller_stacklevel`.

:func:`iter_pages` is the client's one paging loop. It follows the ``nextCursor`` of each page
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
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from catalog_nb.client.errors import TruncatedResultWarning

__all__ = [
    "caller_stacklevel",
    "check_limit",
    "gc_paused",
    "iter_pages",
    "link_cursor",
    "progress_bar",
    "read_pages",
    "warn_truncated",
]

#: Frames of files under this folder are the package's own; warnings point past them.
_PACKAGE = str(Path(__file__).resolve().parents[1])

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
#: undecoded HTTP response of one when :func:`read_pages` is given ``decode``. Endpoints paged
#: by ``start`` ignore ``cursor`` (it is always None for them: they send no ``nextCursor``).
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

    The arguments are those of :func:`iter_pages`; the pages' lists are joined once at the end,
    not record by record.
    """
    pages: list[Sequence[Any]] = []
    total = 0
    for items, matched in iter_pages(fetch, page_size=page_size, limit=limit, progress=progress,
                                     description=description, decode=decode, keep=keep):
        pages.append(items)
        total = matched
    records = [record for items in pages for record in items]
    if limit is not None:
        records = records[:limit]
    return records, total


def iter_pages(
    fetch: Fetch,
    *,
    page_size: int,
    limit: int | None,
    progress: bool,
    description: str,
    decode: Callable[[Any], Any] | None = None,
    keep: Callable[[Sequence[Any]], Sequence[Any]] | None = None,
) -> Iterator[tuple[Sequence[Any], int]]:
    """Each page of a paged query as ``(records, total that matched)``, until ``limit`` records.

    ``fetch(start, size, cursor)`` reads one page: by ``cursor`` when it is given, else from
    ``start``. With ``decode``, ``fetch`` returns the undecoded response and the next page is
    requested (in a worker thread) as soon as its cursor is known from the ``Link`` header,
    while this one is decoded: the service builds page n + 1 while the client decodes page n.
    ``keep`` maps each page's records to what is kept of them (while the next page travels;
    for a page whose ``list`` is no plain list, such as an Arrow page's rows, whatever stands
    for them, one item per record). The last page may hold more than ``limit`` allows: cut it.
    """
    size = max(1, min(page_size, limit)) if limit is not None else max(1, page_size)
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
                count += len(items)
                total = max(total, int(page.get("totalCount") or 0))
                yield (keep(items) if keep is not None else items), total
                target = total if limit is None else min(total, limit)
                if bar is None and progress and target > count:
                    bar = progress_bar(target, description)
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


def progress_bar(total: int | None, description: str, *, unit: str = " rows",
                 leave: bool = False, **options: Any) -> Any:
    """The client's progress bar (``tqdm.auto``: a widget in Jupyter, text elsewhere) over
    ``total`` units; close it when done. ``options`` go to tqdm (``unit_scale``, ...)."""
    from tqdm.auto import tqdm  # imported on first use: tqdm.auto loads ipywidgets

    return tqdm(total=total, desc=description, unit=unit, leave=leave, **options)


def check_limit(limit: int | None, every: str, *, maximum: int | None = None) -> None:
    """Refuse a ``limit=`` below 1 (or above the service's ``maximum``, when there is one).

    ``every`` says what ``limit=None`` reads, e.g. ``"every event"``.
    """
    if maximum is not None:
        if limit is None or not 1 <= limit <= maximum:
            raise ValueError(f"limit must be between 1 and {maximum}")
    elif limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None for {every})")


def caller_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn`, called right here, that names the first
    caller outside the package: the analyst's line, however deep in the client the warning
    is raised (``catalog_nb.notebook`` functions count as the package too)."""
    level = 1
    frame = sys._getframe(1)  # the function that asks
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn_truncated(
    call: str,
    *,
    shown: int,
    total: int | str,
    noun: str,
    because: str,
    order: str = "first",
    remedy: str = "pass a larger limit= or limit=None for all",
) -> None:
    """Say loudly that a result holds only part of what matched: the client never truncates
    silently. One wording for every family::

        resources: returning the first 120 of 250 matching resources because limit=120;
        pass a larger limit= or limit=None for all.

    ``total`` is a count, or a phrase such as ``"more than 2"`` when the service only says
    there are more; ``order`` is ``first`` or ``newest``; ``because`` says what cut the result
    (``limit=120``, a service cap, ...) and ``remedy`` how to get the rest.
    """
    warnings.warn(
        f"{call}: returning the {order} {shown} of {total} matching {noun} because {because}; "
        f"{remedy}.",
        TruncatedResultWarning,
        stacklevel=caller_stacklevel(),
    )


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
