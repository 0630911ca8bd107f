"""The process's search orderings (``server.orderings``): one thread works through them in
turn, skips an ordering its session has replaced, survives a failing one, and ends when idle."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from catalog_nb.server.orderings import Orderings


class Recorder:
    """What the jobs did, from which thread, in order."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self.threads: set[int] = set()
        self.finished = threading.Event()

    def job(self, name: str, *, last: bool = False,
            fails: bool = False) -> Callable[[], None]:
        def run() -> None:
            self.threads.add(threading.get_ident())
            self.done.append(name)
            if last:
                self.finished.set()
            if fails:
                raise RuntimeError(f"{name} failed")
        return run


def _blocked(orderings: Orderings) -> threading.Event:
    """Keep the ordering thread busy until the event returned is set."""
    busy, release = threading.Event(), threading.Event()

    def hold() -> None:
        busy.set()
        release.wait(30)

    orderings.submit("holder", "hold", run=hold, skip=hold)
    assert busy.wait(30)
    return release


def test_orderings_run_in_turn_on_one_thread() -> None:
    orderings, seen = Orderings(), Recorder()
    release = _blocked(orderings)
    for i in range(5):
        orderings.submit(f"s{i}", f"k{i}", run=seen.job(f"run {i}", last=i == 4),
                         skip=seen.job(f"skip {i}"))
    assert orderings.pending() == 5
    release.set()
    assert seen.finished.wait(30)
    assert seen.done == [f"run {i}" for i in range(5)]
    assert len(seen.threads) == 1 and threading.get_ident() not in seen.threads


def test_a_waiting_ordering_replaced_by_its_session_is_skipped() -> None:
    orderings, seen = Orderings(), Recorder()
    release = _blocked(orderings)
    orderings.submit("a", "a1", run=seen.job("run a1"), skip=seen.job("skip a1"))
    orderings.submit("b", "b1", run=seen.job("run b1"), skip=seen.job("skip b1"))
    orderings.submit("a", "a2", run=seen.job("run a2"), skip=seen.job("skip a2"))
    orderings.submit("a", "a3", run=seen.job("run a3", last=True), skip=seen.job("skip a3"))
    release.set()
    assert seen.finished.wait(30)
    assert seen.done == ["skip a1", "run b1", "skip a2", "run a3"]


def test_a_failing_ordering_is_logged_and_the_next_runs(caplog: pytest.LogCaptureFixture) -> None:
    orderings, seen = Orderings(), Recorder()
    release = _blocked(orderings)
    orderings.submit("a", "bad", run=seen.job("bad", fails=True), skip=seen.job("skip bad"))
    orderings.submit("b", "good", run=seen.job("good", last=True), skip=seen.job("skip good"))
    release.set()
    assert seen.finished.wait(30)
    assert seen.done == ["bad", "good"]
    assert any("search bad failed" in r.getMessage() and r.exc_info for r in caplog.records)


def test_the_thread_ends_when_idle_and_starts_again() -> None:
    orderings, seen = Orderings(idle_seconds=0.05), Recorder()
    orderings.submit("a", "a1", run=seen.job("a1", last=True), skip=seen.job("skip a1"))
    assert seen.finished.wait(30)
    deadline = time.monotonic() + 30
    while any(t.name == "search-orderings" and t.ident in seen.threads
              for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.ident in seen.threads for t in threading.enumerate())
    again = Recorder()
    orderings.submit("a", "a2", run=again.job("a2", last=True), skip=again.job("skip a2"))
    assert again.finished.wait(30)
    assert again.done == ["a2"]


def test_a_running_ordering_learns_its_session_searched_again() -> None:
    orderings = Orderings()
    running, release, seen = threading.Event(), threading.Event(), Recorder()
    answers: list[bool] = []

    def first() -> None:
        running.set()
        release.wait(30)
        answers.append(orderings.superseded("a", "a1"))

    orderings.submit("a", "a1", run=first, skip=seen.job("skip a1"))
    assert running.wait(30)
    assert not orderings.superseded("a", "a1")
    orderings.submit("b", "b1", run=seen.job("run b1"), skip=seen.job("skip b1"))
    assert not orderings.superseded("a", "a1")  # another session's search changes nothing
    orderings.submit("a", "a2", run=seen.job("run a2", last=True), skip=seen.job("skip a2"))
    assert orderings.superseded("a", "a1") and not orderings.superseded("a", "a2")
    release.set()
    assert seen.finished.wait(30)
    assert answers == [True] and seen.done == ["run b1", "run a2"]


def test_a_running_ordering_is_stopped_when_its_session_searches_again() -> None:
    """The running job's cancel is called by a newer submit of its session only: not by another
    session's, and not for a job that waits (that one is skipped instead)."""
    orderings = Orderings()
    running, release, seen = threading.Event(), threading.Event(), Recorder()
    cancelled: list[str] = []

    def first() -> None:
        running.set()
        release.wait(30)

    def stop_first() -> None:
        cancelled.append("a1")
        release.set()

    orderings.submit("a", "a1", run=first, skip=seen.job("skip a1"), cancel=stop_first)
    assert running.wait(30)
    orderings.submit("b", "b1", run=seen.job("run b1"), skip=seen.job("skip b1"),
                     cancel=lambda: cancelled.append("b1"))
    assert cancelled == []  # another session's search stops nothing
    orderings.submit("a", "a2", run=seen.job("run a2"), skip=seen.job("skip a2"),
                     cancel=lambda: cancelled.append("a2"))
    orderings.submit("a", "a3", run=seen.job("run a3", last=True), skip=seen.job("skip a3"),
                     cancel=lambda: cancelled.append("a3"))
    assert seen.finished.wait(30)
    # a1 was stopped (which released it); a2 waited and was skipped, so never cancelled.
    assert set(cancelled) == {"a1"}
    assert seen.done == ["run b1", "skip a2", "run a3"]


def test_a_failing_cancel_is_logged_and_the_search_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    orderings = Orderings()
    running, release, seen = threading.Event(), threading.Event(), Recorder()

    def first() -> None:
        running.set()
        release.wait(30)

    def refuse() -> None:
        raise RuntimeError("cannot stop")

    orderings.submit("a", "a1", run=first, skip=seen.job("skip a1"), cancel=refuse)
    assert running.wait(30)
    orderings.submit("a", "a2", run=seen.job("run a2", last=True), skip=seen.job("skip a2"))
    release.set()
    assert seen.finished.wait(30)
    assert seen.done == ["run a2"]
    deadline = time.monotonic() + 30  # the cancel runs on a thread of its own
    while "stopping the ordering of search a1 failed" not in caplog.text:
        assert time.monotonic() < deadline, caplog.text
        time.sleep(0.01)


def test_an_ordering_waits_for_its_quiet_time_and_a_quick_next_search_skips_it() -> None:
    """No ordering starts before its search is ``quiet_seconds`` old; the session's next search
    within that time has the older one skipped without its thread being busy at all."""
    orderings, seen = Orderings(quiet_seconds=0.3), Recorder()
    started = time.monotonic()
    ran_at: list[float] = []

    def first() -> None:
        ran_at.append(time.monotonic() - started)
        seen.job("run a1")()

    orderings.submit("a", "a1", run=first, skip=seen.job("skip a1"))
    assert seen.done == []
    orderings.submit("b", "b1", run=first, skip=seen.job("skip b1"))
    orderings.submit("a", "a2", run=seen.job("run a2", last=True), skip=seen.job("skip a2"))
    assert seen.finished.wait(30)
    assert seen.done == ["skip a1", "run a1", "run a2"]  # b1 ran through first()
    assert ran_at and min(ran_at) >= 0.3


def test_a_page_waiting_for_an_ordering_hurries_it() -> None:
    orderings, seen = Orderings(quiet_seconds=600), Recorder()
    orderings.submit("a", "a1", run=seen.job("run a1", last=True), skip=seen.job("skip a1"))
    orderings.hurry("a", "other")  # not this one: it keeps waiting
    assert not seen.finished.wait(0.3)
    orderings.hurry("a", "a1")
    assert seen.finished.wait(30)
    assert seen.done == ["run a1"]
