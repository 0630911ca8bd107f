"""Look-alike names: user and role names are NFKC-normalised, and a name that looks like an
existing one (the same Unicode TR39 confusable skeleton) is refused with 409 CONFUSABLE_NAME.

``admin`` in fullwidth letters normalises to ``admin``, so it is a duplicate (409
DUPLICATE_NAME); ``admin`` with a Cyrillic a (U+0430) stays itself but looks like ``admin``
(409 CONFUSABLE_NAME naming ``admin``). Names that merely share letters (``José`` and
``Jose``, other scripts) are accepted. Looking a user or role up by a fullwidth name finds the
normalised one.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
import requests

from tests.conftest import ADMIN_PASSWORD, ADMIN_USER, Http, Server
from tests.server.helpers import PASSWORD, create_role, create_user, get_user
from tests.server.hostile.common import StoreState, refused

CYRILLIC_A = "\u0430"  # looks like the Latin a
CYRILLIC_O = "\u043e"  # looks like the Latin o
GREEK_O = "\u03bf"  # omicron, looks like the Latin o


def _fullwidth(text: str) -> str:
    """``text`` in fullwidth forms (NFKC turns them back into ASCII)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _hex() -> str:
    # Letters only: a test name never holds 0/1, which are confusable with O/l themselves.
    return "".join("abcdefghjkmnpqrstuvwxyz"[b % 23] for b in uuid.uuid4().bytes[:8])


def test_fullwidth_admin_is_the_existing_admin(live_server: Server, admin: Http) -> None:
    before = StoreState.of(live_server)
    response = admin.post("/user", json={"name": _fullwidth(ADMIN_USER), "password": PASSWORD})
    refused(live_server, response, 409, "DUPLICATE_NAME", before=before, http=admin)


@pytest.mark.parametrize(
    "spoof",
    [
        CYRILLIC_A + "dmin",
        "\u0410DMIN",  # a Cyrillic capital A, then Latin capitals
        "adm\u0456n",  # a Cyrillic (Ukrainian) i
        "admin\ufe0f",  # a variation selector that shows nothing
        "\U0001d41a\U0001d41d\U0001d426\U0001d422\U0001d427",  # mathematical bold "admin"
    ],
)
def test_a_look_alike_of_an_existing_user_is_refused(
    live_server: Server, admin: Http, spoof: str
) -> None:
    before = StoreState.of(live_server)
    response = admin.post("/user", json={"name": spoof, "password": PASSWORD})
    status = response.status_code
    # NFKC alone already turns the mathematical letters into "admin": a plain duplicate.
    code = "DUPLICATE_NAME" if spoof.startswith("\U0001d41a") else "CONFUSABLE_NAME"
    body = refused(live_server, response, 409, code, ADMIN_USER, before=before, http=admin)
    assert status == 409 and body["errorCode"] == code


def test_a_new_user_name_is_stored_normalised(admin: Http) -> None:
    plain = f"carol-{_hex()}"
    made = create_user(admin, _fullwidth(plain))
    assert made["name"] == plain
    assert get_user(admin, made["key"])["name"] == plain


def test_lookups_by_a_fullwidth_name_find_the_user(admin: Http) -> None:
    plain = f"dave-{_hex()}"
    made = create_user(admin, plain)
    wide = _fullwidth(plain)
    found = admin.get(f"/user/name/{quote(wide, safe='')}")
    assert found.status_code == 200 and found.json()["key"] == made["key"], found.text
    listed = admin.get("/user", params={"name": wide})
    assert [u["key"] for u in listed.json()] == [made["key"]]
    response = admin.post("/user/assign/role", json={"userName": wide, "roleName": "Guest"})
    assert response.status_code == 201, response.text


def test_a_rename_to_a_look_alike_is_refused(live_server: Server, admin: Http) -> None:
    first = create_user(admin, f"erin-{_hex()}")
    second = create_user(admin, f"frank-{_hex()}")
    spoof = first["name"].replace("e", "\u0435", 1)  # a Cyrillic e
    before = StoreState.of(live_server)
    response = admin.put(f"/user/{second['key']}", json={"name": spoof})
    refused(live_server, response, 409, "CONFUSABLE_NAME", first["name"], before=before,
            http=admin)
    # Renaming a user to a look-alike of their own name is no impersonation.
    response = admin.put(f"/user/{first['key']}", json={"name": spoof})
    assert response.status_code == 204, response.text
    assert get_user(admin, first["key"])["name"] == spoof


def test_names_that_only_share_letters_are_accepted(admin: Http) -> None:
    tail = _hex()
    russian = "\u0434\u043c\u0438\u0442\u0440\u0438\u0439"
    for name in (f"jose-{tail}", f"jos\u00e9-{tail}", f"{russian}-{tail}",
                 f"{GREEK_O}mega-{tail}", f"josh-{tail}"):
        create_user(admin, name)


def test_role_names_are_normalised_and_look_alikes_refused(
    live_server: Server, admin: Http
) -> None:
    before = StoreState.of(live_server)
    wide = admin.post("/user/role", json={"name": _fullwidth("Analyst"), "accessLevel": "Guest"})
    refused(live_server, wide, 409, "DUPLICATE_NAME", before=before, http=admin)
    spoof = admin.post("/user/role", json={"name": "An" + CYRILLIC_A + "lyst",
                                           "accessLevel": "Administrator"})
    refused(live_server, spoof, 409, "CONFUSABLE_NAME", "Analyst", before=before, http=admin)
    plain = f"Auditors-{_hex()}"
    role = create_role(admin, _fullwidth(plain), "Guest")
    assert role["name"] == plain
    found = admin.get("/user/role/byname", params={"name": _fullwidth(plain)})
    assert found.status_code == 200 and found.json()["key"] == role["key"], found.text
    user = create_user(admin, f"gina-{_hex()}", roles=[_fullwidth(plain)])
    assert user["roles"] == [plain]


def test_concurrent_look_alikes_leave_exactly_one(admin: Http, live_server: Server) -> None:
    plain = f"hugo-{_hex()}"
    spoofs = [plain, plain.replace("o", CYRILLIC_O), plain.replace("o", GREEK_O),
              _fullwidth(plain), plain.upper().replace("O", "\u041e")]
    statuses: list[int] = []
    start = threading.Barrier(len(spoofs))

    def create(name: str) -> None:
        http = live_server.session()
        start.wait()
        response = http.post("/user", json={"name": name})
        statuses.append(response.status_code)

    threads = [threading.Thread(target=create, args=(n,)) for n in spoofs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(statuses) == [201] + [409] * (len(spoofs) - 1), statuses
    listed = [u["name"] for u in admin.get("/user").json()]
    assert len([n for n in listed if n.casefold().endswith(plain[4:])]) == 1


def test_login_with_a_fullwidth_name_finds_the_user(live_server: Server) -> None:
    response = requests.post(f"{live_server.api}/login", timeout=30, json={
        "username": _fullwidth(ADMIN_USER), "password": ADMIN_PASSWORD})
    assert response.status_code == 200, response.text
    assert response.json()["userInfo"]["username"] == ADMIN_USER


def test_the_login_throttle_counts_every_form_of_a_name(
    make_server: Callable[..., Server]
) -> None:
    server = make_server(login_max_failures=2)
    boss = server.session()
    create_user(boss, "ivan")
    answers: list[Any] = []
    for name in ("ivan", _fullwidth("ivan"), "ivan", "\uff49van"):
        answers.append(requests.post(f"{server.api}/login", timeout=30, json={
            "username": name, "password": "wrong-password-1"}).status_code)
    # Two failures lock the name, in whatever form it is typed next.
    assert answers[:2] == [401, 401] and set(answers[2:]) == {429}, answers
