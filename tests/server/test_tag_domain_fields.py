"""The product's TagDomain fields (issue 17, docs/compatibility.md): ``color`` stored and
written; ``semantic`` BUILT_IN for the domains the service seeds, USER_CREATED otherwise;
``createTags``/``deleteTags``/``readTags``: what the caller may do with the domain's tags."""

from __future__ import annotations

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import assert_error
from tests.server.tag_helpers import immutable_domain, make_domain, member

INVALID = ErrorCode.INVALID_PAYLOAD.value


def test_color_is_stored_and_changed(admin: Http) -> None:
    made = make_domain(admin, color="#1B5E20")
    assert made["color"] == "#1B5E20" and made["semantic"] == "USER_CREATED"
    assert admin.get(f"/tagdomain/{made['key']}").json()["color"] == "#1B5E20"
    changed = admin.put(f"/tagdomain/{made['key']}", json={"color": "blue"})
    assert changed.status_code == 200 and changed.json()["color"] == "blue"
    assert changed.json()["name"] == made["name"]
    cleared = admin.put(f"/tagdomain/{made['key']}", json={"color": None})
    assert cleared.json()["color"] is None
    assert_error(admin.post("/tagdomain", json={"name": "c", "color": "x" * 33}), 400, INVALID,
                 "color")
    listed = admin.post("/tagdomain/list", json=[{"name": made["name"] + "l", "color": "red"}])
    assert listed.status_code == 201 and listed.json()[0]["color"] == "red"


def test_seeded_domains_are_built_in_and_keep_only_their_color_changeable(
    live_server: Server, admin: Http
) -> None:
    seeded = [d for d in admin.get("/tagdomain").json() if d["immutable"]]
    assert seeded and all(d["semantic"] == "BUILT_IN" for d in seeded)
    builtin = immutable_domain(live_server)
    read = admin.get(f"/tagdomain/{builtin['key']}").json()
    assert read["semantic"] == "BUILT_IN"
    recolored = admin.put(f"/tagdomain/{builtin['key']}", json={**read, "color": "gold"})
    assert recolored.status_code == 200, recolored.text
    assert recolored.json()["color"] == "gold"
    assert_error(admin.put(f"/tagdomain/{builtin['key']}", json={"name": "renamed"}), 409)
    # semantic is read-only: BUILT_IN cannot be asked of a create, nor changed
    assert_error(admin.post("/tagdomain", json={"name": "bi", "semantic": "BUILT_IN"}), 400,
                 INVALID, "semantic")
    mine = make_domain(admin)
    assert_error(admin.put(f"/tagdomain/{mine['key']}", json={**mine, "semantic": "BUILT_IN"}),
                 400, INVALID, "semantic")
    assert admin.post("/tagdomain", json={"name": mine["name"] + "c", "semantic": "USER_CREATED"}
                      ).status_code == 201


def test_tag_rights_are_the_callers(live_server: Server, admin: Http) -> None:
    granted, other = make_domain(admin), make_domain(admin)
    steward = member(live_server, admin, "Steward", domains=[granted["key"]])
    guest = member(live_server, admin, "Guest", domains=[granted["key"]])
    as_admin = admin.get(f"/tagdomain/{other['key']}").json()
    assert (as_admin["createTags"], as_admin["deleteTags"], as_admin["readTags"]) == (
        True, True, True)
    seen = {d["key"]: d for d in steward.http.get("/tagdomain").json()}
    assert (seen[granted["key"]]["createTags"], seen[granted["key"]]["deleteTags"]) == (True, True)
    assert (seen[other["key"]]["createTags"], seen[other["key"]]["readTags"]) == (False, True)
    as_guest = guest.http.get(f"/tagdomain/{granted['key']}").json()
    assert (as_guest["createTags"], as_guest["deleteTags"], as_guest["readTags"]) == (
        False, False, True)
    # the read form goes back unchanged; claiming a right is refused by name
    assert admin.put(f"/tagdomain/{other['key']}", json=as_admin).status_code == 200
    assert_error(admin.put(f"/tagdomain/{other['key']}", json={**as_admin, "readTags": False}),
                 400, INVALID, "readTags")
