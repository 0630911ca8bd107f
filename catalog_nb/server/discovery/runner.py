"""Tag discovery over a set of profiled resources: suggest field-level tag associations.

For every field with a value sketch and every enabled tag (rules of ``docs/tags-api.md``):

* **Value rules** - a REGEX tag's pattern, a built-in tag's extra check (:mod:`.checks`), or
  both - apply to fields whose data type the tag's ``regexFilterClass`` admits. The weight is
  the share of the sketch's sampled values that pass (:func:`.regex_rules.score_values`); the
  tag is suggested when the weight reaches its ``minScore``. Rules: ``regex:<tag name>`` and
  the check's own (``check:luhn``...).
  A check may also need the field's name to say what it holds (``Check.context``: passport
  and driving licence numbers), or judge the field as a whole (``Check.scorer``: person names,
  from a names dictionary, the values' shape and the field's name), its score the weight.
* **Learning** - a ``learningEnabled`` tag is suggested on fields that resemble the fields
  people ACCEPTED it on (:mod:`.learning`), from ``discovery_min_learning_score``; the weight is
  the resemblance.

When both fire the higher weight wins and the rules add up. Suggestions are written a batch at
a time with ``record_suggestions`` (REJECTED stays rejected, ACCEPTED is never downgraded); a
suggestion that discovery made earlier and that no longer holds is withdrawn (deleted), unless
someone touched it. Each resource is written in one transaction, with its ``discover`` stage.

A pattern that takes too long on a value (``discovery_regex_timeout_ms``) is skipped for that
field and reported; after ``MAX_TIMEOUTS_PER_TAG`` such fields it is skipped for the rest of the
run. A pattern that does not compile is skipped and reported once.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from catalog_nb.contract import TAG_DEFAULT_MIN_SCORE, TagState
from catalog_nb.server.discovery.builtin import check_of
from catalog_nb.server.discovery.checks import Check
from catalog_nb.server.discovery.learning import Examples, FieldView
from catalog_nb.server.discovery.regex_rules import (
    InvalidPattern,
    Matcher,
    RegexTimeout,
    score_values,
)
from catalog_nb.server.profiling.model import DataType
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store, search
from catalog_nb.server.store import discovery as discovery_store
from catalog_nb.server.store.associations import record_suggestions
from catalog_nb.server.store.common import now_ms

log = logging.getLogger(__name__)

#: minScore of a tag that has none (the contract's, which a Tag answers for it).
DEFAULT_MIN_SCORE = TAG_DEFAULT_MIN_SCORE
#: Fields a pattern may time out on before it is skipped for the rest of the run.
MAX_TIMEOUTS_PER_TAG = 3
#: Suggestions written per transaction: about a millisecond each, so a login waiting behind a
#: batch waits a tenth of a second at most.
WRITE_BATCH = 100
#: One (tag, field) pair may spend this many per-value timeouts in all.
BUDGET_VALUES = 20

#: Counts a discovery run reports (job counts use these names).
COUNT_NAMES = (
    "suggestionsCreated", "suggestionsUpdated", "suggestionsUnchanged", "suggestionsWithdrawn",
    "rejectedKept", "acceptedKept", "fieldsExamined", "resourcesExamined", "discoveryErrors",
)
_OUTCOME_COUNTS = {
    "created": "suggestionsCreated", "updated": "suggestionsUpdated",
    "unchanged": "suggestionsUnchanged", "rejected": "rejectedKept", "accepted": "acceptedKept",
}

Pair = tuple[str, str]  # (field name, tag key)


@dataclass
class TagRule:
    """One enabled tag, ready to evaluate."""

    key: str
    name: str
    full_name: str
    min_score: float
    matcher: Matcher | None = None
    check: Check | None = None
    min_len: int | None = None
    max_len: int | None = None
    types: frozenset[str] | None = None
    learning: bool = False
    examples: Examples = field(default_factory=lambda: Examples([]))
    timeouts: int = 0
    #: The pattern did not compile: the tag's earlier suggestions are left as they are.
    broken: bool = False

    @property
    def has_value_rule(self) -> bool:
        return self.matcher is not None or self.check is not None

    def admits(self, data_type: str) -> bool:
        return self.types is None or data_type in self.types


@dataclass
class DiscoveryReport:
    """What one run did: counts, errors (``{path, message}``) and per-resource outcomes."""

    counts: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, Any]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def error(self, path: str | None, message: str) -> None:
        self.counts["discoveryErrors"] += 1
        self.errors.append({"path": path, "message": message})

    def summary(self) -> str:
        """A sentence for a job's message."""
        c = self.counts
        withdrawn = f", {c['suggestionsWithdrawn']} withdrawn" if c["suggestionsWithdrawn"] else ""
        errors = c["discoveryErrors"]
        return (
            f"Tag discovery on {c['resourcesExamined']} resources ({c['fieldsExamined']} "
            f"fields): {c['suggestionsCreated']} suggestions created, "
            f"{c['suggestionsUpdated']} updated, {c['suggestionsUnchanged']} unchanged"
            f"{withdrawn}; {c['rejectedKept']} rejected and {c['acceptedKept']} accepted "
            f"associations kept; {errors} {'error' if errors == 1 else 'errors'}."
        )


#: Names ``regexFilterClass`` may use besides the data types themselves.
_TYPE_ALIASES = {"NUMBER": {"LONG", "DOUBLE"}, "TEMPORAL": {"DATE", "TIMESTAMP"},
                 "TEXT": {"STRING"}}


def filter_types(text: str | None) -> frozenset[str] | None:
    """The field data types a tag's ``regexFilterClass`` admits (None: every type).

    It lists data types (``STRING``, ``LONG``, ``DOUBLE``, ``DATE``, ``TIMESTAMP``...) or the
    aliases ``NUMBER``, ``TEMPORAL``, ``TEXT``, separated by commas, semicolons or blanks, in any
    case. Names it does not know are ignored, so a class written for another catalog (say a
    Java class name) never silences a tag; with no known name left there is no filter.
    """
    known = {t.value for t in DataType}
    found: set[str] = set()
    for part in (text or "").replace(";", ",").replace(" ", ",").split(","):
        name = part.strip().upper()
        found |= _TYPE_ALIASES.get(name, {name} & known)
    return frozenset(found) or None


def _view(resource_key: str, path: str, row: dict[str, Any]) -> FieldView | None:
    try:
        sketch = ValueSketch.from_dict(row["sketch"]) if row.get("sketch") else None
    except (ValueError, KeyError, TypeError):
        return None  # a sketch of another algorithm or version: nothing to compare
    return FieldView(resource_key, path, str(row["name"]), str(row["data_type"]), sketch)


class Discovery:
    """One discovery run: tags and examples are read once, then resources one by one."""

    def __init__(
        self, store: Store, settings: Settings, *, run_id: str | None = None,
        check_stop: Callable[[], None] = lambda: None,
        on_resource: Callable[[str], None] = lambda path: None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.check_stop = check_stop
        self.on_resource = on_resource
        self.timeout = settings.discovery_regex_timeout_ms / 1000
        self.min_learning = settings.discovery_min_learning_score
        self.report = DiscoveryReport()
        self.rules: list[TagRule] = []
        self._loaded = False

    # ---------------------------------------------------------------------------- loading

    def load_rules(self) -> None:
        """Read the enabled tags and the examples of the learning ones."""
        self._loaded = True
        with self.store.read() as conn:
            tags = discovery_store.enabled_tags(conn)
            learning = [t["key"] for t in tags if t["learning_enabled"]]
            examples = discovery_store.accepted_examples(conn, learning)
        for tag in tags:
            rule = self._rule(tag)
            if rule is not None:
                self.rules.append(rule)
        views: dict[str, list[FieldView]] = {}
        for row in examples:
            view = _view(str(row["resource_key"]), str(row["path"]), row)
            if view is not None:
                views.setdefault(str(row["tag_key"]), []).append(view)
        for rule in self.rules:
            rule.examples = Examples(views.get(rule.key, []))

    def _rule(self, tag: dict[str, Any]) -> TagRule | None:
        rule = TagRule(
            key=str(tag["key"]), name=str(tag["name"]), full_name=str(tag["full_name"]),
            min_score=float(tag["min_score"] if tag["min_score"] is not None
                            else DEFAULT_MIN_SCORE),
            check=check_of(tag["external_source_name"], tag["external_id"]),
            min_len=tag["regex_min_len"], max_len=tag["regex_max_len"],
            types=filter_types(tag["regex_filter_class"]),
            learning=bool(tag["learning_enabled"]),
        )
        if tag["tag_state"] == TagState.REGEX.value and tag["reg_ex"]:
            try:
                rule.matcher = Matcher(str(tag["reg_ex"]))
            except InvalidPattern as exc:
                self.report.error(None, f"Tag '{rule.full_name}' was skipped: {exc}.")
                rule.check = None  # a check alone would suggest what the pattern rules out
                rule.broken = True
        if not rule.has_value_rule and not rule.learning:
            return None
        return rule

    # ---------------------------------------------------------------------------- running

    def run(self, resources: Iterable[dict[str, Any]]) -> DiscoveryReport:
        """Discover on each resource (``{key, path}``); returns the report."""
        if not self._loaded:
            self.load_rules()
        for resource in resources:
            self.check_stop()
            self._discover_in(str(resource["key"]), str(resource["path"]))
            self.on_resource(str(resource["path"]))
        return self.report

    def _discover_in(self, key: str, path: str) -> None:
        """Evaluate every rule over the profiled fields of one resource, write what they
        propose, and count the resource as changed, unchanged, failed or skipped."""
        started = now_ms()
        with self.store.read() as conn:
            rows = discovery_store.profiled_fields(conn, key)
        fields = [v for v in (_view(key, path, row) for row in rows) if v is not None]
        if not fields:
            self.report.skipped.append(path)
            return
        self.report.counts["resourcesExamined"] += 1
        self.report.counts["fieldsExamined"] += len(fields)
        proposals: dict[Pair, tuple[float, set[str]]] = {}
        evaluated: set[Pair] = set()
        problems: list[str] = []
        for rule in self.rules:
            for view in fields:
                self._evaluate(rule, view, proposals, evaluated, problems)
        for attempt in (1, 2):
            try:
                changed = self._write(key, proposals, evaluated, problems, started)
                break
            except IntegrityError:
                # Another process suggested the same association at the same moment: the
                # transaction rolled back whole; the second attempt finds its row.
                if attempt == 2:
                    raise
        if problems:
            self.report.failed.append(path)
            for problem in problems:
                self.report.error(path, problem)
        elif changed:
            self.report.changed.append(path)
        else:
            self.report.unchanged.append(path)

    def _evaluate(
        self, rule: TagRule, view: FieldView, proposals: dict[Pair, tuple[float, set[str]]],
        evaluated: set[Pair], problems: list[str],
    ) -> None:
        pair = (view.name, rule.key)
        weight, rules = 0.0, set[str]()
        # Only a pair evaluated in full may lose an earlier suggestion (withdrawal).
        complete = not rule.broken
        if rule.has_value_rule and rule.timeouts >= MAX_TIMEOUTS_PER_TAG:
            complete = False
        elif rule.has_value_rule:
            try:
                found = self._value_rule(rule, view)
            except RegexTimeout:
                rule.timeouts += 1
                last = rule.timeouts == MAX_TIMEOUTS_PER_TAG
                problems.append(
                    f"Tag '{rule.full_name}' was skipped on field '{view.name}': its regular "
                    f"expression took longer than {self.timeout * 1000:g} ms on a sampled value "
                    "(catastrophic backtracking?)"
                    + ("; it is skipped for the rest of this run" if last else "")
                )
                return
            if found is not None:
                weight, rules = found
        if rule.learning:
            match = rule.examples.best(view)
            if match is not None and match.score >= self.min_learning and match.score > 0:
                weight = max(weight, match.score)
                rules |= set(match.rules)
        if complete:
            evaluated.add(pair)
        if rules:
            proposals[pair] = (weight, rules)

    def _value_rule(self, rule: TagRule, view: FieldView) -> tuple[float, set[str]] | None:
        if not view.sample or not rule.admits(view.data_type):
            return None
        check = rule.check
        if check is not None and not check.context_holds(view.name):
            return None
        if check is not None and check.field is not None and not check.field(view.sample):
            return None
        if check is not None and check.scorer is not None and rule.matcher is None:
            weight = check.scorer(view.name, view.sample)
            if weight <= 0 or weight < rule.min_score:
                return None
            return weight, {check.rule}
        score = score_values(
            view.sample, matcher=rule.matcher, check=rule.check, min_len=rule.min_len,
            max_len=rule.max_len, min_score=rule.min_score, timeout=self.timeout,
            budget=self.timeout * BUDGET_VALUES,
        )
        if score is None or score.weight < rule.min_score or score.matched == 0:
            return None
        fired = set()
        if rule.matcher is not None:
            fired.add(f"regex:{rule.name}")
        if rule.check is not None:
            fired.add(rule.check.rule)
        return score.weight, fired

    def _write(
        self, key: str, proposals: dict[Pair, tuple[float, set[str]]], evaluated: set[Pair],
        problems: list[str], started: int,
    ) -> bool:
        counts: Counter[str] = Counter()
        ordered = sorted(proposals.items())
        # Bounded write transactions: a resource with thousands of fields must not hold the
        # store's write lock for the whole of its suggestions (logins and heartbeats wait on it).
        # Each batch is complete in itself; a run stopped between batches is finished by the
        # next one, which finds the written suggestions unchanged.
        batches = [ordered[at:at + WRITE_BATCH] for at in range(0, len(ordered), WRITE_BATCH)]
        for batch in batches[:-1]:
            with self.store.write() as conn:
                self._suggest(conn, key, batch, counts)
        with self.store.write() as conn:
            self._suggest(conn, key, batches[-1] if batches else [], counts)
            mine = discovery_store.discovery_suggestions(conn, key)
            stale = [k for pair, k in mine.items() if pair in evaluated and pair not in proposals]
            counts["suggestionsWithdrawn"] += discovery_store.withdraw(conn, stale)
            changed = bool(counts["suggestionsCreated"] or counts["suggestionsUpdated"]
                           or counts["suggestionsWithdrawn"])
            if changed:
                # Once per resource, not once per suggestion: it rebuilds every field's text.
                search.refresh(conn, [key])
            discovery_store.mark_discovered(
                conn, key, self.run_id, started, "; ".join(problems) or None
            )
        self.report.counts.update(counts)
        return changed

    @staticmethod
    def _suggest(conn: Connection, key: str,
                 batch: list[tuple[Pair, tuple[float, set[str]]]], counts: Counter[str]) -> None:
        outcomes = record_suggestions(
            conn, key, [(name, tag_key, weight, rules)
                        for (name, tag_key), (weight, rules) in batch])
        counts.update(_OUTCOME_COUNTS[outcome] for outcome in outcomes)


def discover(
    store: Store, settings: Settings, resources: Iterable[dict[str, Any]], *,
    run_id: str | None = None, check_stop: Callable[[], None] = lambda: None,
    on_resource: Callable[[str], None] = lambda path: None,
) -> DiscoveryReport:
    """Run tag discovery over ``resources`` (``{key, path}`` dicts); see the module docstring."""
    return Discovery(store, settings, run_id=run_id, check_stop=check_stop,
                     on_resource=on_resource).run(resources)
