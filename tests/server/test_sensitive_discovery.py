"""Cold discovery of person names and of the Presidio-style built-in tags through the real
service: real files profiled by real PROFILE jobs (each ends with tag discovery), what discovery
wrote read back from the store. Next to each kind of value sit look-alikes that must stay
untagged: city, company and product names under a field called ``name``, all-null and constant
columns, and values with the right shape whose checksum fails."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faker import Faker

from catalog_nb.demo import lake_values
from tests.conftest import Http, Server
from tests.server.discovery_helpers import associations, csv_text, write
from tests.server.sensitive_values import broken, fakes, nhs_numbers, wallets
from tests.server.source_helpers import create_source, run_job

ROWS = 40


def people_and_decoys() -> str:
    rng = np.random.default_rng(17)
    it = Faker("it_IT")  # a locale the demo lake never draws from
    it.seed_instance(4)
    good_wallets = wallets(rng, ROWS)
    return csv_text({
        "k": list(range(ROWS)),
        "label": fakes("nl_NL", "name", ROWS, 1),  # no field-name hint: the values alone
        "vorname": [it.first_name() for _ in range(ROWS)],
        "surname": [it.last_name() for _ in range(ROWS)],
        "name": fakes("en_US", "city", ROWS, 2),  # city names under an ambiguous field name
        "title": fakes("en_US", "company", ROWS, 3),
        "item_name": [f"{a} {n}" for a, n in zip(
            ("Rustic", "Sleek", "Trail", "Alpine", "Urban") * 8,
            ("Tent", "Jacket", "Boot", "Lamp", "Stove", "Pack", "Mug", "Sock") * 5,
            strict=True)],
        "blank": [None] * ROWS,
        "same": ["Maria Rossi"] * ROWS,
        "homepage": [f"https://www.example{i}.org/u/{i * 7}" for i in range(ROWS)],
        "ref": [("https://www.google.com/", "https://www.bing.com/")[i % 2]
                for i in range(ROWS)],
        "nic": [":".join(f"{b:02x}" for b in rng.bytes(6)) for _ in range(ROWS)],
        "btc": good_wallets,
        "btc_bad": [broken(a) for a in good_wallets],
        "passport_no": [f"{chr(65 + i % 26)}{rng.integers(10_000_000, 99_999_999)}"
                        for i in range(ROWS)],
        "ref_no": [f"{chr(65 + i % 26)}{rng.integers(10_000_000, 99_999_999)}"
                   for i in range(ROWS)],
        "driver_license": [f"D{rng.integers(1_000_000, 9_999_999)}" for _ in range(ROWS)],
        "nhs_no": nhs_numbers(rng, ROWS),
        "nhs_bad": nhs_numbers(rng, ROWS, valid=False),
        "card_bad": [lake_values.non_luhn_digits(rng) for _ in range(ROWS)],
        "iban_bad": [broken(lake_values.iban(rng)) for _ in range(ROWS)],
    })


#: What discovery must suggest on ``people_and_decoys`` (field -> built-in tag), and nothing else.
EXPECTED = {"label": "PersonName", "vorname": "PersonName", "surname": "PersonName",
            "homepage": "URL", "nic": "MACAddress", "btc": "CryptoWallet",
            "passport_no": "Passport", "driver_license": "DriverLicense", "nhs_no": "NHSNumber"}


@pytest.fixture(scope="module")
def found(make_server: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, Any]]:
    root: Path = tmp_path_factory.mktemp("sensitive")
    server = make_server(data_roots=[root])
    http: Http = server.session()
    write(root / "src", {"people/extract.csv": people_and_decoys()})
    source = create_source(http, "sensitive-extract", "FILE", str(root / "src"))
    job = run_job(http, source["key"])
    by_field = {field: tags for (_, field), tags in associations(server, source["key"]).items()}
    return by_field, job


def test_cold_discovery_tags_each_column_of_its_kind_and_nothing_else(
    found: tuple[dict[str, dict[str, dict[str, Any]]], dict[str, Any]]
) -> None:
    by_field, job = found
    assert job["state"] == "SUCCEEDED" and job["counts"]["discoveryErrors"] == 0, job
    assert {field: set(tags) for field, tags in by_field.items()} == {
        field: {tag} for field, tag in EXPECTED.items()}


def test_person_names_are_weighed_from_values_and_field_names(
    found: tuple[dict[str, dict[str, dict[str, Any]]], dict[str, Any]]
) -> None:
    by_field, _ = found
    label, surname = by_field["label"]["PersonName"], by_field["surname"]["PersonName"]
    assert label["state"] == "SUGGESTED" and label["rules"] == ["check:person-name"]
    assert label["weight"] >= 0.9  # full names: the dictionary alone is enough
    assert 0.8 <= surname["weight"] < 1.0  # few surnames are given names: the field name helps


def test_checksums_and_context_decide_for_the_presidio_style_tags(
    found: tuple[dict[str, dict[str, dict[str, Any]]], dict[str, Any]]
) -> None:
    by_field, _ = found
    assert by_field["btc"]["CryptoWallet"]["rules"] == ["check:bitcoin-checksum",
                                                        "regex:CryptoWallet"]
    assert by_field["nhs_no"]["NHSNumber"]["weight"] == 1.0
    assert by_field["passport_no"]["Passport"]["rules"] == ["check:passport-context",
                                                            "regex:Passport"]
    # Same values, same shapes: a failing checksum, a field name that says nothing, or a few
    # fixed addresses leave these untagged (the first test checks that none is tagged at all).
    for decoy in ("btc_bad", "nhs_bad", "card_bad", "iban_bad", "ref_no", "ref", "blank",
                  "same", "name", "title", "item_name"):
        assert decoy not in by_field
