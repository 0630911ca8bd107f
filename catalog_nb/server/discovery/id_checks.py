"""Checks of the built-in tags modelled on Microsoft Presidio's predefined pattern recognisers.

Written here from the public definitions of each format (no Presidio code, no Presidio at run
time). Where a format carries a checksum, the check verifies it, as Presidio's validators do:

* Bitcoin addresses: Base58Check (the last four bytes are the first four of the double SHA-256
  of the rest) for legacy P2PKH / P2SH addresses, and the BIP 173 / BIP 350 Bech32 / Bech32m
  checksum for SegWit ones;
* NHS numbers (England, Wales, Isle of Man): the modulus-11 check digit.

Where a format has none (URLs, MAC addresses, passport and driving licence numbers), the check
refuses the values its pattern would take but which cannot be of the kind: a URL without a
real host, a MAC address of all zeros or ones, a number of one repeated digit, a DVLA licence
number whose date of birth part is no date. Passport and driving licence numbers are runs of
digits and letters like any identifier, so (as Presidio does with its context words) their tags
also need the field's name to say what it holds (``Check.context``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

#: Fewest distinct values of a field of URLs (see ``many_urls``).
MIN_DISTINCT_URLS = 10

_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_CONST, _BECH32M_CONST = 1, 0x2BC830A3
_DVLA = re.compile(r"[A-Z9]{5}\d{6}[A-Z9]{2}\d[A-Z]{2}")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def url(value: str) -> bool:
    """Whether ``value`` is a web address: an ``http(s)``/``ftp`` URL, or ``www.`` + host, whose
    host is a domain name with an alphabetic top-level label (or an IP address)."""
    text = value if "://" in value else ("http://" + value if value.startswith("www.") else "")
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError:
        return False
    if parts.scheme.lower() not in ("http", "https", "ftp", "ftps") or not host:
        return False
    if any(c.isspace() for c in value):
        return False
    labels = host.rstrip(".").split(".")
    if all(label.isdigit() for label in labels):
        return len(labels) == 4 and all(int(label) <= 255 for label in labels)
    return (len(labels) >= 2 and labels[-1].isalpha() and len(labels[-1]) >= 2
            and all(_HOST_LABEL.fullmatch(label) for label in labels))


def many_urls(sample: Sequence[str]) -> bool:
    """Whether a field holds enough distinct URLs to say something about people.

    A few fixed addresses repeated over the rows (the referrers of a web log, a vendor's home
    page) are an enumeration of sites, not a person's profile or a tracking link.
    """
    return len(set(sample)) >= MIN_DISTINCT_URLS


def mac_address(value: str) -> bool:
    """Whether ``value`` is an EUI-48 address in one consistent notation and not the all-zero
    or broadcast address (both are placeholders, never a device)."""
    hex_digits = re.sub(r"[:.-]", "", value).lower()
    if len(hex_digits) != 12:
        return False
    separators = set(re.sub(r"[0-9A-Fa-f]", "", value))
    if len(separators) > 1:
        return False
    return hex_digits not in ("000000000000", "ffffffffffff")


def _base58check(value: str) -> bool:
    number = 0
    for char in value:
        digit = _BASE58.find(char)
        if digit < 0:
            return False
        number = number * 58 + digit
    leading = len(value) - len(value.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\x00" * leading + body
    if len(raw) != 25:  # version byte, 20-byte hash, 4-byte checksum
        return False
    digest = hashlib.sha256(hashlib.sha256(raw[:-4]).digest()).digest()
    return raw[-4:] == digest[:4] and raw[0] in (0x00, 0x05)


def _bech32_polymod(values: list[int]) -> int:
    generator = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    checksum = 1
    for value in values:
        top = checksum >> 25
        checksum = (checksum & 0x1FFFFFF) << 5 ^ value
        for bit in range(5):
            checksum ^= generator[bit] if (top >> bit) & 1 else 0
    return checksum


def _bech32(value: str) -> bool:
    if value.lower() != value and value.upper() != value:
        return False  # mixed case is invalid in Bech32
    text = value.lower()
    hrp, sep, data = text.rpartition("1")
    if not sep or hrp not in ("bc", "tb") or not 6 < len(data) <= 84:
        return False
    if any(c not in _BECH32 for c in data):
        return False
    decoded = [_BECH32.index(c) for c in data]
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    constant = _bech32_polymod(expanded + decoded)
    witness_version = decoded[0]
    # BIP 350: version 0 programs use Bech32, later versions Bech32m.
    expected = _BECH32_CONST if witness_version == 0 else _BECH32M_CONST
    return constant == expected and witness_version <= 16


def bitcoin_address(value: str) -> bool:
    """Whether ``value`` is a Bitcoin address with a valid checksum (Base58Check or Bech32/m)."""
    if value[:3].lower() in ("bc1", "tb1"):
        return _bech32(value)
    return value[:1] in "13" and 26 <= len(value) <= 35 and _base58check(value)


def nhs_number(value: str) -> bool:
    """Whether the ten digits of ``value`` carry a valid NHS modulus-11 check digit."""
    digits = [int(c) for c in value if c.isdigit()]
    if len(digits) != 10 or len(set(digits)) == 1:
        return False
    remainder = sum(d * w for d, w in zip(digits[:9], range(10, 1, -1), strict=True)) % 11
    check = (11 - remainder) % 11
    return check != 10 and check == digits[9]


def document_number(value: str) -> bool:
    """Whether an alphanumeric document number is more than a placeholder: not one repeated
    digit (``000000000``) and not a plain ascending run (``123456789``)."""
    digits = "".join(c for c in value if c.isdigit())
    if len(set(digits)) <= 1:
        return False
    return digits not in "01234567890123456789"


def driving_licence(value: str) -> bool:
    """Whether ``value`` can be a driving licence number (see ``document_number``); one of the
    16-character DVLA form must also start with a surname (letters, padded with 9s) and hold a
    month (01-12, 51-62 for women) and a day of birth."""
    text = value.upper()
    if _DVLA.fullmatch(text):
        if not re.fullmatch(r"[A-Z]+9*", text[:5]):
            return False
        month, day = int(text[6:8]), int(text[8:10])
        return (1 <= month <= 12 or 51 <= month <= 62) and 1 <= day <= 31
    return document_number(value)
