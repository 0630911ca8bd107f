"""Values of the Presidio-style built-in tags for the tests and the benchmark: Bitcoin addresses
and NHS numbers with valid (or broken) checksums, and Faker values of chosen locales."""

from __future__ import annotations

import hashlib

import numpy as np
from faker import Faker

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
SEGWIT = ["bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
          "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"]


def base58check(payload: bytes) -> str:
    """A Base58Check string of ``payload`` (a version byte and a 20-byte hash)."""
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, text = int.from_bytes(raw, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        text = B58[digit] + text
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + text


def wallets(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` Bitcoin addresses with valid checksums (legacy P2PKH / P2SH, and SegWit)."""
    found = [base58check(bytes([(0x00, 0x05)[i % 2]]) + rng.bytes(20)) for i in range(count - 2)]
    return found + SEGWIT


def broken(address: str) -> str:
    """``address`` with one character changed: same shape, failing checksum."""
    last = address[-1]
    return address[:-1] + ("2" if last != "2" else "3")


def nhs_numbers(rng: np.random.Generator, count: int, valid: bool = True) -> list[str]:
    """NHS numbers whose modulus-11 check digit is right (``ddd ddd dddd``, the way phone
    numbers are written too) or wrong (``dddddddddd``)."""
    found: list[str] = []
    while len(found) < count:
        digits = [int(d) for d in rng.integers(0, 10, 9)]
        check = (11 - sum(d * w for d, w in zip(digits, range(10, 1, -1), strict=True)) % 11) % 11
        if check == 10:
            continue
        last = check if valid else (check + 1) % 10
        text = "".join(map(str, digits)) + str(last)
        found.append(f"{text[:3]} {text[3:6]} {text[6:]}" if valid else text)
    return found


def fakes(locale: str, what: str, count: int, seed: int) -> list[str]:
    """Up to ``count`` distinct comma-free Faker values (``name``, ``city``, ``company``...):
    fewer when the locale's list runs out first."""
    fake = Faker(locale)
    fake.seed_instance(seed)
    found: dict[str, None] = {}
    for _ in range(count * 20):
        value = str(getattr(fake, what)())
        if "," not in value:
            found[value] = None
            if len(found) == count:
                break
    return list(found)
