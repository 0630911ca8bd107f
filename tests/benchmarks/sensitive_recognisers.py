"""Benchmark: our built-in sensitive-data rules against Microsoft Presidio's predefined pattern
recognisers, on the same values, and PersonName with each language left out of its dictionary.

    python -m tests.benchmarks.sensitive_recognisers [--rows 200] [--seed 7] [--scale 0.3]

Three sections:

1. **Values** - for each tag with a Presidio counterpart, valid values and look-alikes (the
   same shapes with a failing checksum, identifiers of another kind), each judged alone: by our
   rule (pattern, length bounds and value check, as tag discovery applies them to one value) and
   by Presidio's recogniser(s) of that entity, counted when a result covers the whole value
   (at any score, Presidio's default threshold, and at 0.5). Field-name context is not part of
   this section: Passport and DriverLicense need it in discovery (see section 3 of the tests).
2. **Demo lake columns** - the demo lake is profiled by the real service; for every field, its
   sampled values (what discovery sees) go through Presidio's recognisers, and a field is tagged
   when 80 % of them are recognised (our default ``minScore``); precision and recall of both
   against the lake's truth, per tag.
3. **PersonName cold** - columns of full names, given names and surnames from Faker locales the
   demo lake does not draw from (its names come from en_US, de_DE, fr_FR, es_ES), and from the
   tests' hand-written lists; negatives are city, company, job and product names under
   ``name``-like field names. Our dictionary is Faker's given names, so each column is scored
   with its locale's language left out of it (leave-one-language-out): the figure is recall
   on names the dictionary does not hold as such. The demo lake's own four locales are scored
   that way too.
   Presidio has no pattern recogniser for names (it finds PERSON with a spaCy or transformer
   NER model, which cannot be installed here), so only ours is scored.

Presidio runs without an NLP engine (``analyze(text, entities, None)``): pattern recognisers
need none. Not a test: run it by hand and read the figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from catalog_nb.demo import lake_values
from catalog_nb.demo.lake import build_lake
from catalog_nb.server.discovery.builtin import BUILTIN_TAGS, BuiltinTag, check_of
from catalog_nb.server.discovery.person_names import given_names, person_name_score
from catalog_nb.server.discovery.regex_rules import Matcher, score_values
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.store import discovery as discovery_store
from catalog_nb.server.store.schema import data_resources
from tests.benchmarks.harness import profiled_demo
from tests.benchmarks.tag_discovery import KIND_TAGS, suggestions
from tests.server.discovery_helpers import FIRST, LAST
from tests.server.sensitive_values import broken, fakes, nhs_numbers, wallets

BY_NAME = {tag.name: tag for tag in BUILTIN_TAGS}
#: Our tag -> Presidio recogniser class names and the entity each reports.
PRESIDIO: dict[str, list[tuple[str, str]]] = {
    "EmailAddress": [("EmailRecognizer", "EMAIL_ADDRESS")],
    "PhoneNumber": [("PhoneRecognizer", "PHONE_NUMBER")],
    "NationalId": [("UsSsnRecognizer", "US_SSN")],
    "PaymentCard": [("CreditCardRecognizer", "CREDIT_CARD")],
    "IPAddress": [("IpRecognizer", "IP_ADDRESS")],
    "IBAN": [("IbanRecognizer", "IBAN_CODE")],
    "DateOfBirth": [("DateRecognizer", "DATE_TIME")],
    "PostalCode": [("UkPostcodeRecognizer", "UK_POSTCODE"),
                   ("CaPostalCodeRecognizer", "CA_POSTAL_CODE")],
    "URL": [("UrlRecognizer", "URL")],
    "MACAddress": [("MacAddressRecognizer", "MAC_ADDRESS")],
    "CryptoWallet": [("CryptoRecognizer", "CRYPTO")],
    "Passport": [("UsPassportRecognizer", "US_PASSPORT"), ("UkPassportRecognizer", "UK_PASSPORT")],
    "DriverLicense": [("UsLicenseRecognizer", "US_DRIVER_LICENSE"),
                      ("UkDrivingLicenceRecognizer", "UK_DRIVING_LICENCE")],
    "NHSNumber": [("NhsRecognizer", "UK_NHS")],
}
Judge = Callable[[str], float]  # a value -> the best score covering all of it (0: none)


def presidio_judges() -> dict[str, Judge] | None:
    """Our tag -> a function scoring one value with Presidio's recognisers (None: no Presidio)."""
    try:
        import tldextract
        from presidio_analyzer import predefined_recognizers as found
    except ImportError:
        return None
    # Presidio's e-mail validator asks tldextract, whose default fetches the public suffix list
    # from the network on every failed attempt; the list it ships is enough here.
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=())
    judges: dict[str, Judge] = {}
    for tag, recognisers in PRESIDIO.items():
        made = [(getattr(found, cls)(), entity) for cls, entity in recognisers]

        def judge(value: str, made: list[tuple[Any, str]] = made) -> float:
            best = 0.0
            for recogniser, entity in made:
                for result in recogniser.analyze(value, [entity], None) or []:
                    if result.start == 0 and result.end == len(value):
                        best = max(best, float(result.score))
            return best

        judges[tag] = judge
    return judges


def ours(tag: BuiltinTag, value: str) -> bool:
    """Whether one value counts for ``tag`` (pattern, length bounds, value check)."""
    score = score_values(
        [value], matcher=Matcher(tag.regex) if tag.regex else None,
        check=check_of("catalog_nb", tag.external_id), min_len=tag.min_len,
        max_len=tag.max_len, min_score=1.0, timeout=1.0, budget=1.0,
    )
    return score is not None and score.weight == 1.0


def value_sets(rng: np.random.Generator, rows: int) -> dict[str, tuple[list[str], list[str]]]:
    """Tag -> (valid values, look-alikes)."""
    good_wallets = wallets(rng, rows)
    ids = [f"{rng.integers(100_000_000, 999_999_999)}" for _ in range(rows)]
    return {
        "PaymentCard": ([lake_values.card_number(rng) for _ in range(rows)],
                        [lake_values.non_luhn_digits(rng) for _ in range(rows)]),
        "IBAN": ([lake_values.iban(rng, grouped=i % 2 == 0) for i in range(rows)],
                 [broken(lake_values.iban(rng)) for _ in range(rows)]),
        "CryptoWallet": (good_wallets, [broken(w) for w in good_wallets]),
        "NHSNumber": (nhs_numbers(rng, rows), nhs_numbers(rng, rows, valid=False)),
        "URL": ([f"https://www.example{i}.org/u/{i}" for i in range(rows)]
                + [f"www.shop{i}.co.uk" for i in range(rows)],
                [f"/p/PRD-{i}" for i in range(rows)] + [f"file{i}.txt" for i in range(rows)]),
        "MACAddress": ([":".join(f"{b:02x}" for b in rng.bytes(6)) for _ in range(rows)],
                       [":".join(f"{b:02x}" for b in rng.bytes(5)) for _ in range(rows)]
                       + ["00:00:00:00:00:00"] * 5),
        "Passport": ([f"{chr(65 + i % 26)}{rng.integers(10_000_000, 99_999_999)}"
                      for i in range(rows)], ids),
        "DriverLicense": ([f"D{rng.integers(1_000_000, 9_999_999)}" for _ in range(rows)],
                          [f"SO-2024-{i:06d}" for i in range(rows)]),
    }


def section_values(judges: dict[str, Judge] | None, rng: np.random.Generator, rows: int
                   ) -> None:
    print("1. Values (each judged alone; Presidio: a result covering the whole value)")
    print(f"{'tag':<14}{'valid':>6}{'look-alike':>11}   {'ours TP/FP':>11}"
          f"{'Presidio(any) TP/FP':>21}{'Presidio(>=0.5) TP/FP':>23}")
    for tag, (good, bad) in value_sets(rng, rows).items():
        mine = (sum(ours(BY_NAME[tag], v) for v in good), sum(ours(BY_NAME[tag], v) for v in bad))
        line = f"{tag:<14}{len(good):>6}{len(bad):>11}   {mine[0]:>5}/{mine[1]:<5}"
        if judges is not None:
            scored_good = [judges[tag](v) for v in good]
            scored_bad = [judges[tag](v) for v in bad]
            for floor in (1e-9, 0.5):
                tp = sum(s >= floor for s in scored_good)
                fp = sum(s >= floor for s in scored_bad)
                line += f"{tp:>{15 if floor < 0.5 else 17}}/{fp:<5}"
        print(line)


def section_lake(judges: dict[str, Judge] | None, scale: float, seed: int, folder: Path) -> None:
    print(f"\n2. Demo lake columns (scale {scale}): sampled values of each field; Presidio tags "
          "a field when 80 % of them are recognised")
    lake = folder / "lake"
    truth = build_lake(lake, seed=seed, scale=scale)
    expected: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for path, column, kind in truth.sensitive_columns():
        expected[KIND_TAGS[kind]].add((path, column))
    with profiled_demo(lake, folder) as (server, _api, _keys):
        store = server.app.state.store
        found_ours = suggestions(store)
        found_presidio: dict[str, set[tuple[str, str]]] = defaultdict(set)
        with store.read() as conn:
            resources = conn.execute(select(data_resources.c.key, data_resources.c.path)).all()
            fields = [(str(path), row) for key, path in resources
                      for row in discovery_store.profiled_fields(conn, str(key))]
    for path, row in fields:
        sample = [v.strip() for v in ValueSketch.from_dict(row["sketch"]).sample if v.strip()]
        if not sample or judges is None:
            continue
        for tag, judge in judges.items():
            if sum(judge(v) > 0 for v in sample) >= 0.8 * len(sample):
                found_presidio[tag].add((path, str(row["name"])))
    print(f"{'tag':<14}{'truth':>6}   {'ours P / R':>11}   {'Presidio P / R':>15}")
    wrong: list[str] = []
    for tag in (t.name for t in BUILTIN_TAGS):
        for who, got in (("ours", found_ours.get(tag, set())),
                         ("Presidio", found_presidio.get(tag, set()))):
            wrong += [f"  FP {who} {tag}: {p} / {f}" for p, f in sorted(got - expected[tag])]
        want = expected[tag]
        cells = []
        for got in (found_ours.get(tag, set()), found_presidio.get(tag, set())):
            tp = len(got & want)
            precision = f"{tp / len(got):.2f}" if got else "-"
            recall = f"{tp / len(want):.2f}" if want else "-"
            cells.append(f"{precision:>5} / {recall:<5}")
        presidio = cells[1] if tag in PRESIDIO and judges is not None else "(no recogniser)"
        print(f"{tag:<14}{len(want):>6}   {cells[0]:>11}   {presidio:>15}")
    print("\n".join(wrong) if wrong else "  (no false positive)")


def name_columns(rows: int) -> list[tuple[str, str, list[str], bool]]:
    """(label, field name, values, holds person names?) of section 3."""
    rng = np.random.default_rng(3)
    columns: list[tuple[str, str, list[str], bool]] = []
    for seed, locale in enumerate(("it_IT", "nl_NL", "pl_PL", "pt_BR", "sv_SE", "en_GB",
                                   "cs_CZ", "da_DK", "en_US", "de_DE", "fr_FR", "es_ES"),
                                  start=1):
        columns.append((f"{locale} full names", "label", fakes(locale, "name", rows, seed), True))
        columns.append((f"{locale} given names", "first_name",
                        fakes(locale, "first_name", rows // 4, seed), True))
        columns.append((f"{locale} surnames", "surname",
                        fakes(locale, "last_name", rows // 4, seed), True))
        columns.append((f"{locale} cities", "name", fakes(locale, "city", rows // 2, seed),
                        False))
        columns.append((f"{locale} companies", "name",
                        fakes(locale, "company", rows // 2, seed), False))
        columns.append((f"{locale} jobs", "label", fakes(locale, "job", rows // 4, seed), False))
    hand = [f"{FIRST[int(rng.integers(0, 20))]} {LAST[int(rng.integers(0, 16))]}"
            for _ in range(rows)]
    columns.append(("hand-written names", "who", hand, True))
    columns.append(("product names", "name", [
        f"{a} {n}" for a in ("Rustic", "Sleek", "Trail", "Alpine", "Urban", "Classic")
        for n in ("Tent", "Jacket", "Boot", "Lamp", "Stove", "Pack", "Mug", "Sock")], False))
    return columns


def section_names(rows: int, min_score: float) -> float:
    print(f"\n3. PersonName cold, each locale's language left out of the dictionary "
          f"(tagged at >= {min_score})")
    tp = fp = fn = 0
    misses: list[str] = []
    columns = name_columns(rows)
    for label, field, values, is_name in columns:
        # the column's language left out of the dictionary (a label starts with its locale)
        language = label.split("_")[0] if "_" in label.split(" ")[0] else ""
        weight = person_name_score(field, values, given_names(frozenset({language})))
        tagged = weight >= min_score
        tp, fp, fn = tp + (tagged and is_name), fp + (tagged and not is_name), fn + (
            is_name and not tagged)
        if tagged != is_name:
            misses.append(f"  {'FP' if tagged else 'FN'} {label} ({field}): {weight:.2f}")
    recall = tp / (tp + fn) if tp + fn else 0.0
    precision = tp / (tp + fp) if tp + fp else 0.0
    print(f"columns of names {tp + fn}, others {len(columns) - tp - fn}: "
          f"precision {precision:.2f}, recall {recall:.2f}")
    print("\n".join(misses) if misses else "  (no false positive, no miss)")
    return recall


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=0.3)
    args = parser.parse_args(argv)
    judges = presidio_judges()
    if judges is None:
        print("presidio-analyzer is not installed (it is in the dev extra): ours only.\n")
    section_values(judges, np.random.default_rng(args.seed), args.rows)
    with tempfile.TemporaryDirectory(prefix="sensitive-") as folder:
        section_lake(judges, args.scale, args.seed, Path(folder))
    section_names(args.rows, BY_NAME["PersonName"].min_score)
    return 0


if __name__ == "__main__":
    sys.exit(main())
