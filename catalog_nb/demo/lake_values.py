"""Realistic values for the demo lake: card numbers, IBANs, phones, IP addresses, emails.

Every function draws from a numpy ``Generator`` handed in by the caller, so the lake stays a pure
function of its seed. Faker covers names, SSNs, streets and postcodes; the values here are made
by hand because their validity rules matter to the benchmarks (Luhn for cards, ISO 7064 mod 97
for IBANs) and because Faker's phone formats include extensions no tag regex should be asked to
understand.
"""

from __future__ import annotations

import ipaddress
import unicodedata

import numpy as np

# Issuer prefixes and lengths of the networks a small US retailer sees most.
_CARD_BRANDS: tuple[tuple[tuple[str, ...], int, float], ...] = (
    (("4",), 16, 0.55),                                      # Visa
    (("51", "52", "53", "54", "55", "2221", "2720"), 16, 0.35),  # Mastercard
    (("34", "37"), 15, 0.10),                                 # American Express
)

# Country -> BBAN layout ("n" digit, "a" upper-case letter); real lengths, simplified layouts.
_IBAN_LAYOUTS: dict[str, str] = {
    "DE": "n" * 18,
    "FR": "n" * 23,
    "NL": "aaaa" + "n" * 10,
    "ES": "n" * 20,
    "IT": "a" + "n" * 22,
    "GB": "aaaa" + "n" * 14,
}

_PHONE_FORMATS = ("({a}) {e}-{n}", "{a}-{e}-{n}", "+1 {a} {e} {n}", "{a}.{e}.{n}")


def _digits(rng: np.random.Generator, count: int) -> str:
    return "".join(str(d) for d in rng.integers(0, 10, size=count))


def luhn_valid(number: str) -> bool:
    """Whether ``number`` (digits, spaces and dashes allowed) passes the Luhn checksum."""
    digits = [int(ch) for ch in number if ch.isdigit()]
    if len(digits) < 2:
        return False
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def luhn_check_digit(payload: str) -> str:
    """The digit that makes ``payload + digit`` pass the Luhn checksum."""
    total = 0
    for position, char in enumerate(reversed(payload)):
        digit = int(char)
        if position % 2 == 0:  # these positions are doubled once the check digit is appended
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return str(-total % 10)


def card_number(rng: np.random.Generator) -> str:
    """A payment card number valid under Luhn, with a real issuer prefix and length."""
    weights = np.array([brand[2] for brand in _CARD_BRANDS])
    prefixes, length, _ = _CARD_BRANDS[int(rng.choice(len(_CARD_BRANDS), p=weights))]
    prefix = prefixes[int(rng.integers(0, len(prefixes)))]
    payload = prefix + _digits(rng, length - len(prefix) - 1)
    return payload + luhn_check_digit(payload)


def non_luhn_digits(rng: np.random.Generator, length: int = 16) -> str:
    """A digit string of card length that fails Luhn (a decoy such as a transaction reference).

    Random digits pass Luhn one time in ten; those are nudged so that decoys never do, which
    keeps the ground truth unambiguous for a Luhn-checking tag.
    """
    number = str(int(rng.integers(1, 10))) + _digits(rng, length - 1)
    if luhn_valid(number):
        number = number[:-1] + str((int(number[-1]) + 1) % 10)
    return number


def iban_valid(iban: str) -> bool:
    """Whether ``iban`` (spaces allowed) has valid ISO 7064 mod-97 check digits."""
    compact = iban.replace(" ", "").upper()
    if len(compact) < 5 or not compact[:2].isalpha():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def iban(rng: np.random.Generator, *, grouped: bool = False) -> str:
    """An IBAN with valid check digits; ``grouped`` prints it in blocks of four, as on paper."""
    countries = sorted(_IBAN_LAYOUTS)
    country = countries[int(rng.integers(0, len(countries)))]
    bban = "".join(
        str(rng.integers(0, 10)) if kind == "n" else chr(ord("A") + int(rng.integers(0, 26)))
        for kind in _IBAN_LAYOUTS[country]
    )
    numeric = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    compact = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    if not grouped:
        return compact
    return " ".join(compact[i:i + 4] for i in range(0, len(compact), 4))


def phone(rng: np.random.Generator, style: int | None = None) -> str:
    """A North American number in one of four common written styles (random unless given)."""
    area = f"{rng.integers(2, 10)}{rng.integers(0, 10)}{rng.integers(0, 10)}"
    exchange = f"{rng.integers(2, 10)}{_digits(rng, 2)}"
    chosen = int(rng.integers(0, len(_PHONE_FORMATS))) if style is None else style
    return _PHONE_FORMATS[chosen].format(a=area, e=exchange, n=_digits(rng, 4))


def public_ipv4(rng: np.random.Generator) -> str:
    """A plausible public IPv4 address (no private, loopback, link-local or multicast ranges)."""
    while True:
        first = int(rng.integers(11, 224))
        if first not in (100, 127, 169, 172, 192, 198):
            break
    rest = rng.integers(0, 256, size=3)
    return f"{first}.{rest[0]}.{rest[1]}.{rest[2]}"


def private_ipv4(rng: np.random.Generator) -> str:
    """An address of the 10.0.0.0/8 range, as store terminals and internal probes have."""
    rest = rng.integers(0, 256, size=3)
    return f"10.{rest[0]}.{rest[1]}.{max(int(rest[2]), 1)}"


def ipv6(rng: np.random.Generator) -> str:
    """A global unicast IPv6 address in compressed notation."""
    high = (0x2A00 + int(rng.integers(0, 0x100))) << 112
    low = int.from_bytes(rng.bytes(14), "big")
    return str(ipaddress.IPv6Address(high | low))


def ascii_fold(text: str) -> str:
    """``text`` without accents and anything but letters and digits, lower-cased (for emails)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return "".join(ch for ch in folded.lower() if ch.isalnum())


def email(first: str, last: str, domain: str, rng: np.random.Generator, taken: set[str]) -> str:
    """A unique address built from a person's name, the way people actually pick them."""
    first_part, last_part = ascii_fold(first) or "user", ascii_fold(last) or "mail"
    shapes = (f"{first_part}.{last_part}", f"{first_part[0]}{last_part}",
              f"{first_part}{last_part}", f"{last_part}.{first_part}")
    local = shapes[int(rng.integers(0, len(shapes)))]
    candidate = f"{local}@{domain}"
    while candidate in taken:
        candidate = f"{local}{int(rng.integers(1, 1000))}@{domain}"
    taken.add(candidate)
    return candidate
