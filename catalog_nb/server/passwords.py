"""Passwords: hashed with scrypt (memory-hard, in the standard library) and a per-password salt.

The parameters travel inside the hash so they can be raised later without breaking old hashes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1
def hash_password(password: str) -> str:
    """A salted scrypt hash of ``password``, self-describing (``scrypt$n$r$p$salt$hash``)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32
    )
    return _stored_form(salt, digest)


def _stored_form(salt: bytes, digest: bytes) -> str:
    b64 = base64.b64encode
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` matches ``stored``; False for a user without a password.

    A missing hash is checked against a dummy so that the time taken does not tell whether the
    user exists.
    """
    candidate = stored or _DUMMY_HASH
    try:
        scheme, n, r, p, salt, digest = candidate.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
        )
    except ValueError:
        return False
    return stored is not None and hmac.compare_digest(actual, expected)


#: What a missing hash is checked against: a hash of the usual form with a random salt, so the
#: check costs one scrypt like a real one; its random digest matches no password. Made without
#: hashing anything: a real hash here would cost a scrypt at every import of the service.
_DUMMY_HASH = _stored_form(secrets.token_bytes(16), secrets.token_bytes(32))
