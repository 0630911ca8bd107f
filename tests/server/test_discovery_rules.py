"""The pieces under tag discovery: time-bounded matching, value shares, and learning's
resemblance (names, value overlap from sketches, value distributions)."""

from __future__ import annotations

import time

import pytest

from catalog_nb.server.discovery import regex_rules
from catalog_nb.server.discovery.checks import CHECKS
from catalog_nb.server.discovery.learning import (
    Examples,
    FieldView,
    best_resemblance,
    distribution,
    lower_bound,
    name_similarity,
    name_tokens,
    overlap,
    resemble,
)
from catalog_nb.server.discovery.regex_rules import (
    InvalidPattern,
    Matcher,
    RegexTimeout,
    score_values,
)
from catalog_nb.server.discovery.runner import filter_types
from catalog_nb.server.profiling.sketch import build_sketch

CATASTROPHIC = r"(a|aa)+$"
EVIL = "a" * 40 + "b"


def _score(values: list[str], pattern: str | None = r"\d+", **options: object) -> object:
    settings: dict[str, object] = {"matcher": Matcher(pattern) if pattern else None,
                                   "check": None, "min_len": None, "max_len": None,
                                   "min_score": 0.0, "timeout": 0.5, "budget": 5.0}
    settings.update(options)
    return score_values(values, **settings)  # type: ignore[arg-type]


def test_the_share_of_matching_values_is_the_weight() -> None:
    score = _score(["1", "22", "x", " 333 ", "", "  "])
    assert score is not None and (score.matched, score.total) == (3, 4)  # blanks are not values
    assert score.weight == 0.75  # type: ignore[attr-defined]
    assert _score([]) is None and _score(["", " "]) is None


def test_length_bounds_apply_to_the_stripped_value() -> None:
    values = ["1", "12", " 123 ", "1234", "12345"]
    score = _score(values, min_len=2, max_len=4)
    assert (score.matched, score.total) == (3, 5)  # type: ignore[attr-defined]
    # a check alone (no pattern), as built-in VALUE tags have
    score = _score(["4111111111111111", "4111111111111112"], None, check=CHECKS["luhn"])
    assert (score.matched, score.total) == (1, 2)  # type: ignore[attr-defined]


def test_scoring_stops_once_min_score_is_out_of_reach() -> None:
    calls = []

    class Counting(Matcher):
        def fullmatch(self, text: str, timeout: float) -> bool:
            calls.append(text)
            return super().fullmatch(text, timeout)

    values = [f"x{i}" for i in range(100)]
    assert score_values(values, matcher=Counting(r"\d+"), check=None, min_len=None, max_len=None,
                        min_score=0.8, timeout=1, budget=5) is None
    assert len(calls) == 21  # 21 misses of 100 already rule out 0.8


def test_a_catastrophic_pattern_times_out_instead_of_hanging() -> None:
    matcher = Matcher(CATASTROPHIC)
    started = time.monotonic()
    with pytest.raises(RegexTimeout):
        matcher.fullmatch(EVIL, timeout=0.05)
    assert time.monotonic() - started < 2
    # the budget of a whole field bounds many slow values too
    with pytest.raises(RegexTimeout):
        _score(["a" * 22 + "b"] * 50, CATASTROPHIC, timeout=0.04, budget=0.1)
    assert matcher.fullmatch("aaaa", timeout=0.05)


def test_the_classic_nested_quantifier_is_harmless_with_the_regex_module() -> None:
    started = time.monotonic()
    assert not Matcher(r"(a+)+$").fullmatch("a" * 250 + "b", timeout=0.5)
    assert time.monotonic() - started < 1


def test_patterns_that_do_not_compile_are_refused() -> None:
    with pytest.raises(InvalidPattern, match="does not compile"):
        Matcher("([a-z]")


def test_without_the_regex_module_dangerous_shapes_are_refused(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(regex_rules, "_regex", None)
    for pattern in (r"(a+)+$", CATASTROPHIC, r"(\w+\s?)*$", r"(a)\1+"):
        with pytest.raises(InvalidPattern, match="regex"):
            Matcher(pattern)
    safe = Matcher(r"[a-z]+(?:\.[a-z]+)*@[a-z]+\.[a-z]{2,}")
    assert not safe.bounded and safe.fullmatch("ana.lytic@example.org", 0.1)
    assert not safe.fullmatch("ana.lytic", 0.1)


# ------------------------------------------------------------------------------------ learning


def _field(name: str, values: list[object], data_type: str = "STRING",
           resource: str = "r1") -> FieldView:
    return FieldView(resource, f"{resource}.csv", name, data_type, build_sketch(values))


def test_names_compare_by_tokens_and_trigrams() -> None:
    assert name_tokens("customerEmail_2") == ["customer", "email", "2"]
    assert name_tokens("client.IP") == ["client", "ip"]
    assert name_similarity("birth_date", "BirthDate") == 1.0
    assert name_similarity("birth_date", "birthdate") == 1.0
    assert name_similarity("full_name", "name") >= 0.6
    assert name_similarity("dob_ts", "born") == 0.0
    assert name_similarity("", "x") == 0.0


def test_overlap_counts_at_its_lower_bound() -> None:
    assert lower_bound(1.0, 0) == 0.0
    assert lower_bound(1.0, 2) == pytest.approx(2 / 3)
    assert 0.99 < lower_bound(1.0, 256) < 1.0
    names = [f"Person {i}" for i in range(1000)]
    everyone, some = build_sketch(names), build_sketch(names[:300])
    assert overlap(some, everyone) > 0.95 and overlap(everyone, some) > 0.95
    assert overlap(build_sketch([f"Other {i}" for i in range(300)]), everyone) == 0.0


def test_distributions_compare_temporal_and_numeric_fields_only() -> None:
    births = _field("born", [f"{1940 + i % 60}-0{1 + i % 9}-1{i % 10}" for i in range(300)],
                    "DATE")
    others = _field("dob", [f"{1950 + i % 45}-0{1 + i % 9}-2{i % 10}" for i in range(200)],
                    "DATE", "r2")
    hires = _field("hired", [f"{2010 + i % 15}-0{1 + i % 9}-1{i % 10}" for i in range(200)],
                   "DATE", "r3")
    assert distribution(births, others) > 0.7
    assert distribution(births, hires) == 0.0
    text = _field("born", [f"{1940 + i}-01-01" for i in range(30)], "STRING")
    assert distribution(births, text) == 0.0
    assert distribution(births, _field("few", ["1950-01-01"], "DATE")) == 0.0


def test_resemblance_combines_values_and_names() -> None:
    names = [f"Given{i} Family{i % 37}" for i in range(400)]
    accepted = _field("label", names)
    copy = _field("person", names[:150], resource="r2")
    found = resemble(copy, accepted)
    assert found.score > 0.95 and found.rules == ("learning:value-overlap",)
    same_name = _field("label", [f"Other{i} Name" for i in range(50)], resource="r3")
    found = resemble(same_name, accepted)
    assert found.score == pytest.approx(0.5) and found.rules == ("learning:name",)
    unrelated = _field("title", [f"Trail Tent {i}" for i in range(50)], resource="r4")
    assert resemble(unrelated, accepted).score == 0.0
    # the best example wins; a field is never compared with itself
    best = best_resemblance(copy, [unrelated, accepted, copy])
    assert best is not None and best.score > 0.95
    assert best_resemblance(accepted, [accepted]) is None


def test_the_examples_shortcut_answers_like_the_full_comparison() -> None:
    names = [f"Given{i} Family{i % 37}" for i in range(400)]
    examples = [_field("label", names), _field("born", ["1950-01-01", "1960-02-02"] * 3, "DATE")]
    shortcut = Examples(examples)
    candidates = [_field("person", names[:50], resource="r2"),
                  _field("label", [f"Other{i}" for i in range(40)], resource="r3"),
                  _field("title", [f"Tent {i}" for i in range(40)], resource="r4"),
                  _field("dob", ["1955-01-01", "1958-03-03", "1961-01-01"] * 2, "DATE", "r5"),
                  examples[0]]
    for candidate in candidates:
        fast, full = shortcut.best(candidate), best_resemblance(candidate, examples)
        assert (fast and fast.score) == pytest.approx(full and full.score), candidate.name
    assert not Examples([]) and Examples([]).best(candidates[0]) is None


def test_regex_filter_class_names_data_types() -> None:
    assert filter_types(None) is None and filter_types("") is None
    assert filter_types("STRING,LONG") == {"STRING", "LONG"}
    assert filter_types(" string ; Temporal") == {"STRING", "DATE", "TIMESTAMP"}
    assert filter_types("number") == {"LONG", "DOUBLE"}
    assert filter_types("java.lang.String") is None  # unknown names never silence a tag
