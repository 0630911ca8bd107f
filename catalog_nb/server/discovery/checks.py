"""Extra checks of the built-in tags: what a regular expression alone cannot tell.

A check is a predicate over one stripped value (``value``) and, optionally, over the field's
whole sample (``field``). Tag discovery counts a sampled value as matching a tag only when its
regular expression matches *and* the value check passes; a field-level check that fails stops the
tag from being suggested for that field at all. Each check has a rule name (``check:luhn``...)
that discovery records in the association's ``rules``.

The checks are about the values' own structure (check digits, address syntax, plausible
ranges), never about any particular data set. Column names count in two places only, both
declared on the check: formats without a checksum that any identifier could have (passport and
driving licence numbers, ``Check.context``), and person names (``Check.scorer``), where a field
called ``surname`` says what a column of capitalised words alone cannot. The checks modelled on
Microsoft Presidio's recognisers live in :mod:`.id_checks`, the person-name scorer in
:mod:`.person_names`.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from catalog_nb.server.discovery import id_checks, person_names

#: Oldest and youngest ages a date of birth in a business record plausibly gives.
MAX_AGE_YEARS = 120
MIN_AGE_YEARS = 14
#: Fewest distinct addresses in a field of client IP addresses (see ``many_addresses``).
MIN_DISTINCT_ADDRESSES = 10

#: Share of valid NHS check digits above which phone-shaped numbers are NHS numbers.
NHS_SHARE = 0.5

_DIGITS = re.compile(r"\d")
_DATE_FORMS = (
    # ISO dates, optionally with a midnight time (dates stored in timestamp columns)
    re.compile(r"(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:[T ]00:00(?::00(?:\.0+)?)?Z?)?"),
    # day.month.year (European) and month/day/year (US): both read as written
    re.compile(r"(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})"),
    re.compile(r"(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})"),
)


def digits_of(value: str) -> str:
    """The decimal digits of ``value``, in order."""
    return "".join(_DIGITS.findall(value))


def luhn(value: str) -> bool:
    """Whether the digits of ``value`` pass the Luhn checksum and start like a payment card.

    The first digit is the card's Major Industry Identifier: 2 to 6 are the card networks
    (Mastercard 2/5, Amex and Diners 3, Visa 4, Discover 6); other leading digits are not
    payment cards even when the checksum happens to pass (one random number in ten does).
    """
    digits = digits_of(value)
    if len(digits) < 12 or digits[0] not in "23456":
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def iban_mod97(value: str) -> bool:
    """Whether ``value`` (blanks allowed) has valid ISO 13616 / ISO 7064 mod-97 check digits."""
    compact = value.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    if not compact.isalnum() or not compact.isascii():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def ip_address(value: str) -> bool:
    """Whether ``value`` is a syntactically valid IPv4 or IPv6 address (octets up to 255...)."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def many_addresses(sample: Sequence[str]) -> bool:
    """Whether a field holds enough distinct values to be a field of client addresses.

    A handful of address-like values repeated over the rows is an enumeration (four-part version
    numbers such as ``3.12.0.45``, a few fixed hosts), not personal data about clients.
    """
    return len(set(sample)) >= MIN_DISTINCT_ADDRESSES


def us_ssn(value: str) -> bool:
    """Whether a ``AAA-GG-SSSS`` number can be a US Social Security Number.

    The Social Security Administration never issues area 000, 666 or 900-999, group 00 or
    serial 0000.
    """
    digits = digits_of(value)
    if len(digits) != 9:
        return False
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    return area not in (0, 666) and area < 900 and group != 0 and serial != 0


def phone_digits(value: str) -> bool:
    """Whether ``value`` holds as many digits as a dialable phone number (10 to 15, E.164).

    Shorter formatted numbers are mostly something else: SSNs (9), dates and times (8).
    """
    return 10 <= len(digits_of(value)) <= 15


def not_health_numbers(sample: Sequence[str]) -> bool:
    """Whether a field of phone-shaped numbers is not a field of NHS numbers.

    NHS numbers are written ``943 476 5919``, as US phone numbers are; one random number in
    eleven carries a valid modulus-11 check digit, so a field whose values nearly all do holds
    NHS numbers.
    """
    passing = sum(1 for value in sample if id_checks.nhs_number(value))
    return passing < NHS_SHARE * len(sample)


def date_of_birth(value: str, today: dt.date | None = None) -> bool:
    """Whether ``value`` is a calendar date that gives a living person's plausible age.

    Accepted forms: ISO ``YYYY-MM-DD`` (also with a midnight time: a birth date kept in a
    timestamp column), ``DD.MM.YYYY`` and ``MM/DD/YYYY``. A time of day other than midnight
    means an event, not a birth. The age must lie between 14 and 120 years.
    """
    today = today or dt.date.today()
    for form in _DATE_FORMS:
        found = form.fullmatch(value)
        if found is None:
            continue
        try:
            born = dt.date(int(found["y"]), int(found["m"]), int(found["d"]))
        except ValueError:
            return False
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        return MIN_AGE_YEARS <= age <= MAX_AGE_YEARS
    return False


@dataclass(frozen=True)
class Check:
    """An extra check of a tag: a per-value predicate and an optional per-field one.

    ``context`` lists field-name tokens of which one must be in the field's name for the tag to
    be suggested at all: formats without a checksum that any identifier could have (passport
    numbers) are only told apart by what the column is called. ``scorer``, when set, replaces the
    share of passing values as the weight: ``scorer(field name, sampled values)`` judges the
    field as a whole (person names, :mod:`.person_names`).
    """

    rule: str
    value: Callable[[str], bool]
    field: Callable[[Sequence[str]], bool] | None = None
    context: frozenset[str] = frozenset()
    scorer: Callable[[str, Sequence[str]], float] | None = None

    def context_holds(self, field_name: str) -> bool:
        """Whether the field's name satisfies ``context`` (always, when there is none)."""
        if not self.context:
            return True
        return bool(self.context & person_names.field_tokens(field_name))


#: Field-name tokens that say a column holds passport numbers (en, fr, de, es, it, nl, pt).
PASSPORT_CONTEXT = frozenset({"passport", "passports", "passeport", "reisepass", "pass",
                              "pasaporte", "passaporto", "paspoort", "passaporte", "ppn"})
#: Field-name tokens that say a column holds driving licence numbers.
DRIVING_LICENCE_CONTEXT = frozenset({
    "driver", "drivers", "driving", "licence", "license", "dl", "dln", "fuehrerschein",
    "führerschein", "fuhrerschein", "permis", "licencia", "carnet", "patente", "rijbewijs",
    "carta", "cnh",
})

#: The checks built-in tags refer to by name (``BuiltinTag.check``).
CHECKS: dict[str, Check] = {
    "luhn": Check("check:luhn", luhn),
    "mod97": Check("check:mod97", iban_mod97),
    "ip-address": Check("check:ip-address", ip_address, many_addresses),
    "ssn": Check("check:ssn", us_ssn),
    "phone": Check("check:phone-digits", phone_digits, not_health_numbers),
    "date-of-birth": Check("check:date-of-birth", date_of_birth),
    "url": Check("check:url", id_checks.url, id_checks.many_urls),
    "mac-address": Check("check:mac-address", id_checks.mac_address),
    "bitcoin": Check("check:bitcoin-checksum", id_checks.bitcoin_address),
    "nhs-mod11": Check("check:nhs-mod11", id_checks.nhs_number),
    "passport": Check("check:passport-context", id_checks.document_number,
                      context=PASSPORT_CONTEXT),
    "driving-licence": Check("check:driving-licence-context", id_checks.driving_licence,
                             context=DRIVING_LICENCE_CONTEXT),
    "person-name": Check("check:person-name",
                         lambda value: person_names.name_tokens_of(value) is not None,
                         scorer=person_names.person_name_score),
}
