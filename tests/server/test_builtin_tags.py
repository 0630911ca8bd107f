"""The built-in tag domain ``Sensitive``: each tag's rule on real-looking values and decoys, the
extra checks, and the seeding on first and later starts (idempotent, refreshed, never forced into
someone's own domain)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

import numpy as np
import pytest
from sqlalchemy import delete, insert, select, update

from catalog_nb.demo import lake_values
from catalog_nb.server.bootstrap import bootstrap, seed_builtin_tags
from catalog_nb.server.discovery import checks, person_names
from catalog_nb.server.discovery.builtin import BUILTIN_TAGS, DOMAIN_NAME, BuiltinTag, check_of
from catalog_nb.server.discovery.regex_rules import Matcher, score_values
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store.common import fold, new_key, now_ms
from catalog_nb.server.store.schema import tag_domains, tags
from tests.conftest import ADMIN_PASSWORD, ADMIN_USER, Server

BY_NAME = {tag.name: tag for tag in BUILTIN_TAGS}
RNG = np.random.default_rng(5)


def passes(tag: BuiltinTag, value: str, data_type: str = "STRING") -> bool:
    """Whether one value counts for ``tag`` in a field of ``data_type`` (weight 1 of 1)."""
    types = set((tag.filter_class or "").split(",")) - {""}
    if types and data_type not in types:
        return False
    score = score_values(
        [value], matcher=Matcher(tag.regex) if tag.regex else None,
        check=check_of("catalog_nb", tag.external_id), min_len=tag.min_len,
        max_len=tag.max_len, min_score=1.0, timeout=1.0, budget=1.0,
    )
    return score is not None and score.weight == 1.0


POSITIVE = {
    "EmailAddress": ["ana.lytic@example.org", "x@y.io", "o'brien+tag@mail.co.uk",
                     " j.doe@acme-outfitters.example "],
    "PhoneNumber": ["(647) 897-3504", "510.958.3467", "+1 832 430 4973", "244-589-0674",
                    "+44 20 7946 0958", "+33 1 23 45 67 89", "030 1234567"],
    "NationalId": ["224-99-4710", "078 05 1120"],
    "PaymentCard": [lake_values.card_number(RNG) for _ in range(5)]
    + ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"],
    "IPAddress": ["70.114.175.57", "10.0.0.1", "2a00:1450:4001:81b::200e", "::1"],
    "IBAN": [lake_values.iban(RNG), lake_values.iban(RNG, grouped=True),
             "DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432"],
    "DateOfBirth": ["1947-04-23", "1990-12-31T00:00:00", "23.04.1961", "04/23/1961"],
    "PostalCode": ["02134", "96147-1234", "K1A 0B1", "SW1A 1AA", "1012 AB"],
    "URL": ["https://www.example.com/u/42?tab=1", "http://shop.acme-outfitters.example/p/1",
            "www.example.org", "ftp://files.example.co.uk/a.csv", "http://10.0.0.1:8080/x"],
    "MACAddress": ["00:1A:2b:3c:4D:5e", "00-1a-2b-3c-4d-5e", "001a.2b3c.4d5e"],
    "CryptoWallet": ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
                     "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
                     "BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ",
                     "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"],
    "Passport": ["C03005988", "987654320", "AB7261934"],
    "DriverLicense": ["D7391624", "MORGA657054SM9IJ", "S82736451", "829104736"],
    "NHSNumber": ["943 476 5919", "9434765919", "401-023-2137"],
}
NEGATIVE = {
    "EmailAddress": ["ana.lytic@", "@example.org", "ana lytic@example.org", "ana@localhost",
                     "https://www.google.com/"],
    "PhoneNumber": ["7924702772", "224-99-4710", "2024-01-05", "10.175.244.33", "SO-2024-000325",
                    "4111 1111 1111 1111", "3.12.0.45", "96147-1234"],
    "NationalId": ["224994710", "000-12-3456", "666-12-3456", "912-12-3456", "123-00-4567",
                   "123-45-0000", "2024-01-05"],
    "PaymentCard": ["6343930694471164"[:-1] + "0", lake_values.non_luhn_digits(RNG),
                    "1234567812345670", "7924702772", "SO-2024-000325", "4111-1111-1111-111x"],
    "IPAddress": ["256.1.1.1", "1.2.3", "10.175.244", "abc", "2024-01-05", "12:30"],
    "IBAN": ["DE00 3704 0044 0532 0130 00", "GB82WEST12345698765433", "PRD-22124-W",
             "SO-2024-000325"],
    "DateOfBirth": ["2023-11-08T20:12:07", "2020-01-01", "1850-06-01", "2003-02-30", "Mar 1990",
                    "19470423"],
    "PostalCode": ["1234", "123456", "PRD-22124-W", "CC-100", "k1a 0b1", "2024-01-05"],
    "URL": ["/p/PRD-22124-W", "example.com", "http://localhost/", "https://exa mple.com",
            "mailto:ana@example.org", "http://a.b.123/", "https://www.google.com:99999/"],
    "MACAddress": ["00:1A:2b-3c:4D:5e", "00:00:00:00:00:00", "FF:FF:FF:FF:FF:FF",
                   "00:1A:2b:3c:4D", "3.12.0.45", "0a1b2c3d4e5f"],
    "CryptoWallet": ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLz",
                     "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr",
                     "bc1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ", "PRD-22124-W"],
    "Passport": ["000000000", "123456789", "PRD-22124-W", "12345"],
    "DriverLicense": ["MORGA613054SM9IJ", "99999657054SM9IJ", "11111111", "SO-2024-000325"],
    "NHSNumber": ["943 476 5918", "4010232138", "1111111111", "(647) 897-3504"],
}


@pytest.mark.parametrize("tag", sorted(POSITIVE))
def test_each_rule_takes_its_kind_of_value(tag: str) -> None:
    missed = [v for v in POSITIVE[tag] if not passes(BY_NAME[tag], v)]
    assert missed == []


@pytest.mark.parametrize("tag", sorted(NEGATIVE))
def test_each_rule_leaves_look_alikes_alone(tag: str) -> None:
    taken = [v for v in NEGATIVE[tag] if passes(BY_NAME[tag], v)]
    assert taken == []


def test_data_type_filters_keep_numbers_out_of_codes() -> None:
    # A byte count or a salary of five digits is no ZIP code; a card stored as a number is a card.
    assert not passes(BY_NAME["PostalCode"], "67030", "LONG")
    assert passes(BY_NAME["PostalCode"], "67030", "STRING")
    card = lake_values.card_number(RNG)
    assert passes(BY_NAME["PaymentCard"], card, "LONG")
    assert not passes(BY_NAME["DateOfBirth"], "1947-04-23", "LONG")
    assert passes(BY_NAME["DateOfBirth"], "1947-04-23", "DATE")


def test_checks() -> None:
    assert checks.luhn("4111 1111 1111 1111") and not checks.luhn("4111 1111 1111 1112")
    assert not checks.luhn("0000000000000000")  # passes the checksum, no card network starts 0
    assert not checks.luhn("42")
    assert checks.iban_mod97("GB82 WEST 1234 5698 7654 32")
    assert not checks.iban_mod97("GB82 WEST 1234 5698 7654 31")
    assert not checks.iban_mod97("GB82-WEST-1234-5698-7654-32")
    assert checks.ip_address("192.168.0.1") and not checks.ip_address("192.168.0.256")
    assert checks.many_addresses([f"10.0.0.{i}" for i in range(10)])
    assert not checks.many_addresses(["3.12.0.45", "3.11.2.87", "3.12.1.102"])
    assert checks.us_ssn("001-01-0001") and not checks.us_ssn("900-01-0001")
    assert checks.phone_digits("+1 (555) 010-9999") and not checks.phone_digits("555-0199")
    today = dt.date(2025, 6, 1)
    assert checks.date_of_birth("2011-05-31", today)  # 14 years old yesterday
    assert not checks.date_of_birth("2011-06-02", today)  # 13
    assert checks.date_of_birth("1905-06-01", today) and not checks.date_of_birth("1904-01-01",
                                                                                   today)
    assert not checks.date_of_birth("1980-01-01T12:30:00", today)


def test_new_checks() -> None:
    assert checks.CHECKS["url"].field is not None
    assert not checks.CHECKS["url"].field(["https://www.google.com/"] * 30)
    assert checks.CHECKS["url"].field([f"https://example.org/u/{i}" for i in range(10)])
    passport, licence = checks.CHECKS["passport"], checks.CHECKS["driving-licence"]
    for name in ("passport_no", "PassportNumber", "numero_passeport", "Reisepass.Nr"):
        assert passport.context_holds(name), name
    for name in ("ref_no", "passenger_id", "account"):
        assert not passport.context_holds(name), name
    for name in ("driver_license", "DL_NUMBER", "licenceNo", "führerschein_nr"):
        assert licence.context_holds(name), name
    assert not licence.context_holds("customer_ref")
    # NHS numbers written like phone numbers are not phone numbers (one random number in
    # eleven has a valid check digit).
    phone = checks.CHECKS["phone"]
    assert phone.field is not None
    assert not phone.field(["943 476 5919", "401 023 2137"])
    assert phone.field(["(647) 897-3504", "510.958.3467", "244-589-0674"])


def test_definitions_are_consistent() -> None:
    assert len(BUILTIN_TAGS) == 15 and len(BY_NAME) == 15
    for tag in BUILTIN_TAGS:
        assert tag.sensitivity is not None and 0 < tag.min_score <= 1
        assert tag.regex or tag.check or tag.learning, tag.name
        if tag.regex:
            Matcher(tag.regex)
        assert (tag.tag_state.value == "REGEX") == bool(tag.regex), tag.name
    assert {t.name for t in BUILTIN_TAGS if t.learning} == {"DateOfBirth", "PersonName"}


# ------------------------------------------------------------------------------------- seeding


def _builtins(store: Store) -> dict[str, dict[str, object]]:
    with store.read() as conn:
        rows = conn.execute(
            select(tags).join(tag_domains, tag_domains.c.key == tags.c.domain_key)
            .where(tag_domains.c.name == DOMAIN_NAME)
        ).mappings().all()
    return {str(r["name"]): dict(r) for r in rows}


def test_first_start_creates_the_domain_and_its_tags(store: Store) -> None:
    with store.write() as conn:
        bootstrap(conn, Settings(admin_password="first-start-pw"))
    found = _builtins(store)
    assert set(found) == set(BY_NAME)
    with store.read() as conn:
        domain = conn.execute(select(tag_domains)).mappings().one()
    assert domain["name"] == DOMAIN_NAME and domain["immutable"] is True
    for name, row in found.items():
        tag = BY_NAME[name]
        assert row["full_name"] == f"{DOMAIN_NAME}.{name}" and row["parent_key"] is None
        assert row["parent_scope"] == "" and row["name_fold"] == fold(name)
        assert row["immutable"] is True and row["enable"] is True and row["state"] == "ACCEPTED"
        assert row["tag_state"] == tag.tag_state.value and row["reg_ex"] == tag.regex
        assert row["sensitivity"] == tag.sensitivity.value
        assert row["min_score"] == tag.min_score and row["learning_enabled"] is tag.learning
        assert row["external_source_name"] == "catalog_nb"
        assert row["external_id"] == f"builtin:{name}"
    assert found["PaymentCard"]["regex_min_len"] == 13
    assert found["PersonName"]["tag_state"] == "VALUE"


def test_seeding_again_changes_nothing_and_keeps_what_people_tuned(store: Store) -> None:
    with store.write() as conn:
        assert seed_builtin_tags(conn)["created"] == len(BUILTIN_TAGS)
    with store.write() as conn:
        conn.execute(update(tags).where(tags.c.name == "EmailAddress")
                     .values(min_score=0.5, enable=False, synonyms=["courriel"]))
        # an older release's definition of a code-owned column
        conn.execute(update(tags).where(tags.c.name == "IBAN").values(reg_ex="[A-Z]{2}.*"))
    before = _builtins(store)
    with store.write() as conn:
        assert seed_builtin_tags(conn) == {"created": 0, "refreshed": 1,
                                           "unchanged": len(BUILTIN_TAGS) - 1}
    after = _builtins(store)
    assert after["IBAN"]["reg_ex"] == BY_NAME["IBAN"].regex
    email = after["EmailAddress"]
    assert (email["min_score"], email["enable"], email["synonyms"]) == (0.5, False, ["courriel"])
    assert email["changed_ms"] == before["EmailAddress"]["changed_ms"]
    with store.write() as conn:
        assert seed_builtin_tags(conn) == {"created": 0, "refreshed": 0,
                                           "unchanged": len(BUILTIN_TAGS)}


def test_a_store_lacking_the_builtins_gets_them_on_the_next_start(store: Store) -> None:
    with store.write() as conn:
        seed_builtin_tags(conn)
        conn.execute(delete(tags).where(tags.c.name.in_(["IBAN", "PostalCode"])))
    assert len(_builtins(store)) == len(BUILTIN_TAGS) - 2
    with store.write() as conn:
        bootstrap(conn, Settings(admin_password="second-start-pw"))
    assert set(_builtins(store)) == set(BY_NAME)


def test_peoples_own_domain_of_that_name_is_left_alone(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    now = now_ms()
    with store.write() as conn:
        conn.execute(insert(tag_domains).values(
            key=new_key(), name="sensitive", name_fold="sensitive", description="ours",
            immutable=False, created_ms=now, changed_ms=now))
    with caplog.at_level(logging.WARNING), store.write() as conn:
        assert seed_builtin_tags(conn)["created"] == 0
    assert "not the built-in one" in caplog.text
    with store.read() as conn:
        assert conn.execute(select(tags)).first() is None


def test_a_running_service_has_the_builtins(server: Server) -> None:
    found = _builtins(server.store)
    assert set(found) == set(BY_NAME)


#: The built-in tags of the release before cold person names and the Presidio-style tags.
EARLIER_RELEASE = ("EmailAddress", "PhoneNumber", "NationalId", "PaymentCard", "IPAddress",
                   "IBAN", "DateOfBirth", "PostalCode", "PersonName")


def test_a_store_of_an_earlier_release_gets_the_new_tags_when_a_server_starts(
    store_url: str, make_server: Callable[..., Server]
) -> None:
    with Store(store_url) as earlier:
        earlier.migrate()
        with earlier.write() as conn:
            bootstrap(conn, Settings(admin_user=ADMIN_USER, admin_password=ADMIN_PASSWORD))
            conn.execute(delete(tags).where(tags.c.name.not_in(EARLIER_RELEASE)))
            # PersonName as that release defined it: learning only, on fields of any type
            conn.execute(update(tags).where(tags.c.name == "PersonName").values(
                regex_filter_class=None, min_score=0.7))
        assert set(_builtins(earlier)) == set(EARLIER_RELEASE)
    server = make_server(db_url=store_url)
    found = _builtins(server.store)
    assert set(found) == set(BY_NAME)
    for name in set(BY_NAME) - set(EARLIER_RELEASE):
        assert found[name]["reg_ex"] == BY_NAME[name].regex, name
        assert found[name]["enable"] is True and found[name]["state"] == "ACCEPTED"
    person = found["PersonName"]
    assert person["regex_filter_class"] == "STRING"  # refreshed: a code-owned column
    assert person["min_score"] == 0.7  # kept: people may tune it
    assert server.session().get("/tag", params={"domainKey": person["domain_key"]}).json()


# --------------------------------------------------------------------------------- PersonName


def test_person_name_shape() -> None:
    for value in ("Anne-Marie Dubois", "Seán O'Brien", "Ludwig van Beethoven", "Dr. Ana Costa",
                  "García, María", "Jan de Vries", "J. R. Smith", "Björk"):
        assert person_names.name_tokens_of(value) is not None, value
    for value in ("Acme Outfitters Boston", "Johnson LLC", "Port Jennifer", "Saint-Denis",
                  "ana berger", "IBM", "SO-2024-000325", "A B C D E F", "Main Street",
                  "Smith, Jones and Lee, Inc", "42 Anne Street", ""):
        assert person_names.name_tokens_of(value) is None, value


def test_person_name_dictionary_and_context() -> None:
    assert len(person_names.given_names()) > 20_000  # Faker's given names, every locale
    assert person_names.is_known("Antônio") and person_names.is_known("anne-marie")
    assert not person_names.is_known("Outfitters")
    assert person_names.context_of("manager.name") == person_names.STRONG_CONTEXT
    assert person_names.context_of("Nachname") == person_names.STRONG_CONTEXT
    assert person_names.context_of("label") == person_names.WEAK_CONTEXT
    assert person_names.context_of("c_addr") == 0.0
    assert person_names.context_of("city_name") is None
    assert person_names.context_of("productName") is None


def test_person_name_score() -> None:
    full = ["Ana Berger", "Hugo Costa", "Ines Novak", "Paul Larsen", "Maya Okafor"]
    surnames = ["Berger", "Costa", "Novak", "Larsen", "Okafor", "Haddad", "Petrov", "Moreau"]
    assert person_names.person_name_score("x", full) == 1.0
    assert person_names.person_name_score("surname", surnames) >= 0.8
    assert person_names.person_name_score("code", surnames) < 0.5
    assert person_names.person_name_score("city", full) == 0.0  # a negative field name
    assert person_names.person_name_score("name", ["Ana Berger"] * 30) == 0.0  # a constant
    assert person_names.person_name_score("name", []) == 0.0
    products = ["Rustic Tent", "Sleek Jacket", "Trail Boot", "Alpine Lamp", "Urban Stove"]
    assert person_names.person_name_score("name", products) < 0.5
