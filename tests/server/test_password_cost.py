"""The service hashes passwords at the full scrypt cost.

The test processes hash at a lower cost (tests/conftest.py says why); this checks, in a fresh
interpreter that never imported the tests, what a real service stores and what its logins of
unknown users are checked against.
"""

from __future__ import annotations

import subprocess
import sys

PROBE = """
from catalog_nb.server import passwords
stored = passwords.hash_password("a-password-1")
print(stored.split("$")[1:4])
print(passwords._DUMMY_HASH.split("$")[1:4])
print(passwords.verify_password("a-password-1", stored), passwords.verify_password("other", stored))
"""


def test_the_service_hashes_at_the_full_cost() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['16384', '8', '1']",
        "['16384', '8', '1']",
        "True False",
    ]
