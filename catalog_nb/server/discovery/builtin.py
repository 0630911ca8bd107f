"""The built-in tag domain ``Sensitive``: common kinds of sensitive data, created on first start.

Every tag here is immutable (people may tune ``enable``, ``minScore``, ``learningEnabled`` and
``synonyms`` only). Discovery finds a stored built-in tag's extra check through its
``externalSourceName`` (``catalog_nb``) and ``externalId`` (``builtin:<Name>``), so checks live
in code (:mod:`.checks`) and a new release can refine a definition: seeding refreshes the
code-owned columns of an existing store's built-ins and keeps what people tuned.

How each tag is recognised (REGEX tags: regular expression over each sampled value, stripped,
within ``regexMinLen..regexMaxLen``, plus the check; the share of sampled values that pass is the
weight, suggested from ``minScore``):

================  ======  ==================================================================
EmailAddress      REGEX   local@domain.tld (RFC 5322 "dot-atom" form)
PhoneNumber       REGEX   +country forms, or national forms with separators whose last group
                          has 4+ digits; 10-15 digits in all (E.164). Bare digit runs are not
                          taken: they cannot be told from any other identifier.
NationalId        REGEX   US SSN ``AAA-GG-SSSS`` with separators; never-issued numbers refused
PaymentCard       REGEX   13-19 digits (blanks or dashes allowed), Luhn checksum, network prefix
IPAddress         REGEX   IPv4 / IPv6 that ``ipaddress`` accepts, in fields of 10+ addresses
IBAN              REGEX   country, check digits, BBAN (grouped or not), ISO 7064 mod-97
DateOfBirth       VALUE   dates giving an age of 14-120 years (no time of day); also learning
PostalCode        REGEX   US ZIP / ZIP+4, Canada, United Kingdom, Netherlands; text fields only
PersonName        VALUE   a field scorer (``person_names``): a given-names dictionary, the
                          values' shape and the field's name; also learning
URL               REGEX   http(s)/ftp URLs and ``www.`` hosts with a real domain, in fields
                          of 10+ distinct addresses (a few fixed sites are no personal data)
MACAddress        REGEX   EUI-48 in colon, hyphen or Cisco dot notation; not all 0s or 1s
CryptoWallet      REGEX   Bitcoin P2PKH/P2SH (Base58Check) and SegWit (Bech32/Bech32m)
                          addresses, checksum verified
Passport          REGEX   US (9 digits, letter + 8 digits) and UK (2 letters + 7 digits) forms;
                          no checksum exists, so the field's name must say passport
DriverLicense     REGEX   US state forms and the UK DVLA form (surname, month and day of
                          birth checked); the field's name must say driving licence
NHSNumber         REGEX   ten digits (3-3-4), NHS modulus-11 check digit
================  ======  ==================================================================

The tags after PersonName follow Microsoft Presidio's predefined pattern recognisers (``URL``,
``MAC_ADDRESS``, ``CRYPTO``, ``US_PASSPORT`` / ``UK_PASSPORT``, ``US_DRIVER_LICENSE`` /
``UK_DRIVING_LICENCE``, ``UK_NHS``) with the same checksums where a format has one; Presidio's
context words, which raise a weak pattern's score in running text, become here a requirement
on the field's name (``Check.context``) for the formats that have no checksum.

``regexFilterClass`` names the field data types a tag's rules look at (comma-separated
``DataType`` names, see ``runner.filter_types``; empty: any). Postal codes and phone numbers
are codes: a field typed as a number holds measures or counters (byte counts, salaries), whose
five digits are no ZIP code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalog_nb.contract import Sensitivity, TagAssociationState, TagState
from catalog_nb.server.discovery.checks import CHECKS, Check

DOMAIN_NAME = "Sensitive"
DOMAIN_DESCRIPTION = (
    "Built-in tags for common kinds of sensitive data; discovery suggests them on profiled "
    "fields."
)
#: ``externalSourceName`` of the built-in tags; their ``externalId`` is ``builtin:<Name>``.
SOURCE_NAME = "catalog_nb"


@dataclass(frozen=True)
class BuiltinTag:
    """One built-in tag's definition (the code-owned part of its stored row)."""

    name: str
    description: str
    sensitivity: Sensitivity
    tag_state: TagState = TagState.REGEX
    regex: str | None = None
    min_len: int | None = None
    max_len: int | None = None
    min_score: float = 0.8
    filter_class: str | None = "STRING"
    check: str | None = None
    learning: bool = False
    synonyms: tuple[str, ...] = ()

    @property
    def external_id(self) -> str:
        return f"builtin:{self.name}"

    def code_columns(self) -> dict[str, Any]:
        """Columns a release owns: refreshed on every start, never tuned by people."""
        return {
            "description": self.description,
            "tag_state": self.tag_state.value,
            "reg_ex": self.regex,
            "regex_min_len": self.min_len,
            "regex_max_len": self.max_len,
            "regex_filter_class": self.filter_class,
            "sensitivity": self.sensitivity.value,
            "immutable": True,
            "external_id": self.external_id,
            "external_source_name": SOURCE_NAME,
        }

    def tuned_columns(self) -> dict[str, Any]:
        """Columns people may tune: set when the tag is created, kept afterwards."""
        return {
            "state": TagAssociationState.ACCEPTED.value,
            "enable": True,
            "learning_enabled": self.learning,
            "min_score": self.min_score,
            "synonyms": list(self.synonyms),
        }


_EMAIL = (
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
)
_PHONE = (
    r"\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?)(?:[ .-]?\d{2,4}){2,5}"
    r"|(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])(?:\d{2,4}[ .-]){0,2}\d{4,8}"
)
_POSTAL = (
    r"\d{5}(?:-\d{4})?"  # United States: ZIP and ZIP+4 (also DE, FR, ES, IT five digits)
    r"|[A-Z]\d[A-Z] ?\d[A-Z]\d"  # Canada
    r"|[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}"  # United Kingdom
    r"|\d{4} ?[A-Z]{2}"  # Netherlands
)

_URL = r"(?i)(?:https?|ftps?)://[^\s/?#]+(?:[/?#]\S*)?|www\.[^\s/?#]+(?:[/?#]\S*)?"
_MAC = (
    r"[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}"  # 00:1a:2b:3c:4d:5e (also with hyphens)
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}"  # Cisco's 001a.2b3c.4d5e
)
_BITCOIN = (
    r"[13][1-9A-HJ-NP-Za-km-z]{25,34}"  # legacy P2PKH / P2SH, Base58
    r"|(?:bc|BC|tb|TB)1[02-9AC-HJ-NP-Zac-hj-np-z]{6,87}"  # SegWit, Bech32 / Bech32m
)
_LICENCE = (
    r"[A-Z]{1,2}\d{3,14}"  # US states: one or two letters and digits (CA A1234567...)
    r"|\d{2}[A-Z]{3}\d{5}|\d{3}[A-Z]{2}\d{4}|\d{7,9}[A-Z]?|\d{6,14}"  # digit-led states
    r"|[A-Z9]{5}\d{6}[A-Z9]{2}\d[A-Z]{2}"  # UK DVLA
)

BUILTIN_TAGS: tuple[BuiltinTag, ...] = (
    BuiltinTag(
        "EmailAddress", "An e-mail address.", Sensitivity.CONFIDENTIAL, regex=_EMAIL,
        min_len=6, max_len=254,
        synonyms=("email", "e-mail", "mail address", "email address"),
    ),
    BuiltinTag(
        "PhoneNumber", "A telephone number, national or international form.",
        Sensitivity.CONFIDENTIAL, regex=_PHONE, min_len=10, max_len=25, check="phone",
        synonyms=("phone", "telephone", "mobile", "phone number"),
    ),
    BuiltinTag(
        "NationalId", "A national identification number (US Social Security Number form).",
        Sensitivity.RESTRICTED, regex=r"\d{3}[- ]\d{2}[- ]\d{4}", min_len=11, max_len=11,
        check="ssn", synonyms=("ssn", "social security number", "national id"),
    ),
    BuiltinTag(
        "PaymentCard", "A payment card number (PAN), checked with the Luhn algorithm.",
        Sensitivity.RESTRICTED, regex=r"\d(?:[ -]?\d){12,18}", min_len=13, max_len=23,
        filter_class="STRING,LONG", check="luhn",
        synonyms=("card number", "credit card", "pan"),
    ),
    BuiltinTag(
        "IPAddress", "An IPv4 or IPv6 address.", Sensitivity.CONFIDENTIAL,
        regex=r"(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*", min_len=3,
        max_len=45, check="ip-address", synonyms=("ip", "ip address", "client address"),
    ),
    BuiltinTag(
        "IBAN", "An International Bank Account Number, with valid mod-97 check digits.",
        Sensitivity.RESTRICTED, regex=r"[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}", min_len=15,
        max_len=42, check="mod97", synonyms=("iban", "bank account", "account number"),
    ),
    BuiltinTag(
        "DateOfBirth", "A person's date of birth.", Sensitivity.CONFIDENTIAL,
        tag_state=TagState.VALUE, min_len=8, max_len=30, filter_class="STRING,DATE,TIMESTAMP",
        check="date-of-birth", learning=True,
        synonyms=("date of birth", "birth date", "birthdate", "dob", "birthday"),
    ),
    BuiltinTag(
        "PostalCode", "A postal code (US ZIP, Canadian, British or Dutch form).",
        Sensitivity.INTERNAL, regex=_POSTAL, min_len=5, max_len=10,
        synonyms=("zip", "zip code", "postcode", "postal code"),
    ),
    BuiltinTag(
        "PersonName", "A person's name.", Sensitivity.CONFIDENTIAL, tag_state=TagState.VALUE,
        check="person-name", learning=True,
        synonyms=("name", "full name", "first name", "last name", "surname"),
    ),
    BuiltinTag(
        "URL", "A web address (http, https or ftp URL, or www. host).", Sensitivity.INTERNAL,
        regex=_URL, min_len=8, max_len=2048, check="url",
        synonyms=("url", "link", "website", "web address"),
    ),
    BuiltinTag(
        "MACAddress", "A network card's hardware (MAC, EUI-48) address.",
        Sensitivity.CONFIDENTIAL, regex=_MAC, min_len=14, max_len=17, check="mac-address",
        synonyms=("mac", "mac address", "hardware address", "device id"),
    ),
    BuiltinTag(
        "CryptoWallet", "A Bitcoin wallet address, with a valid Base58Check or Bech32 checksum.",
        Sensitivity.RESTRICTED, regex=_BITCOIN, min_len=26, max_len=90, check="bitcoin",
        synonyms=("wallet", "bitcoin address", "btc address", "crypto address"),
    ),
    BuiltinTag(
        "Passport", "A passport number (US, UK and similar forms), in a field named so.",
        Sensitivity.RESTRICTED, regex=r"[A-Z]{0,2}\d{7,9}", min_len=7, max_len=9,
        filter_class="STRING,LONG", check="passport",
        synonyms=("passport", "passport number", "travel document"),
    ),
    BuiltinTag(
        "DriverLicense", "A driving licence number (US state and UK DVLA forms), in a field "
        "named so.", Sensitivity.RESTRICTED, regex=_LICENCE, min_len=4, max_len=20,
        filter_class="STRING,LONG", check="driving-licence",
        synonyms=("driver license", "driving licence", "dl number", "licence number"),
    ),
    BuiltinTag(
        "NHSNumber", "A UK National Health Service number, with a valid modulus-11 check digit.",
        Sensitivity.RESTRICTED, regex=r"\d{3}[- ]?\d{3}[- ]?\d{4}", min_len=10, max_len=12,
        filter_class="STRING,LONG", check="nhs-mod11",
        synonyms=("nhs number", "nhs no", "health number"),
    ),
)

_BY_EXTERNAL_ID = {tag.external_id: tag for tag in BUILTIN_TAGS}


def builtin_of(external_source: str | None, external_id: str | None) -> BuiltinTag | None:
    """The built-in definition of a stored tag, from its external source and id (else None)."""
    if external_source != SOURCE_NAME or external_id is None:
        return None
    return _BY_EXTERNAL_ID.get(external_id)


def check_of(external_source: str | None, external_id: str | None) -> Check | None:
    """The extra check of a stored built-in tag (None for other tags and unchecked ones)."""
    builtin = builtin_of(external_source, external_id)
    if builtin is None or builtin.check is None:
        return None
    return CHECKS[builtin.check]
