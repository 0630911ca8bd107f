"""The OpenAPI document tells the truth (issue 17), checked through the running service.

Schemathesis checks every operation's answers against the document (test_schemathesis.py); this
module pins the particular promises the issue names: strict types refused with 400, the statuses
each family documents, the multipart upload and its CSV answer, the validation's constraints in
the schema, an example of every request body and success answer (valid against its schema and
taken by the parsing), the bodies the routes read themselves, and a real schema for every
success answer, which the answers of a profiled catalog match.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import requests
from jsonschema import Draft202012Validator

from catalog_nb.server.openapi import RoleRemovals
from catalog_nb.server.schemas import examples
from catalog_nb.server.schemas.common import Payload
from catalog_nb.server.schemas.resource_query import parse_update
from catalog_nb.server.schemas.resources import FIELD_WRITABLE, WRITABLE
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, create_user
from tests.server.source_helpers import profiled_demo_catalog


@pytest.fixture(scope="module")
def document(live_server: Server) -> dict[str, Any]:
    response = live_server.anonymous().get("/openapi.json")
    assert response.status_code == 200
    spec: dict[str, Any] = response.json()
    return spec


def _operation(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    operation: dict[str, Any] = document["paths"]["/api/v2" + path][method.lower()]
    return operation


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    resolved: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return resolved


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/search/new", {"searchPhrase": "orders", "preformedQuery": "yes"}),
    ("POST", "/search/new", {"searchPhrase": "orders", "partialSearch": 1}),
    ("POST", "/search/new", {"pagingCriteria": {"start": "0", "size": 10}}),
    ("POST", "/search/new", {"pagingCriteria": {"start": 0, "size": 10.0}}),
    ("PUT", "/user/_me", {"prefiltersEnabled": 0}),
    ("PUT", "/user/_me", {"prefiltersEnabled": "true"}),
    ("POST", "/auditevent/search", {"fromTime": True}),
    ("POST", "/auditevent/search", {"size": "10"}),
    ("POST", "/user/role", {"name": "strict-role", "defaultRole": "false"}),
    ("POST", "/tagdomain", {"name": "StrictDomain", "description": 1}),
])
def test_a_value_of_another_type_is_refused_not_coerced(
        admin: Http, method: str, path: str, body: dict[str, Any]) -> None:
    response = admin.request(method, path, json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["errorCode"] == "INVALID_PAYLOAD" and error["status"] == 400
    assert error["message"].startswith("Invalid request:")


def test_strict_types_still_take_the_right_ones(admin: Http) -> None:
    found = admin.post("/search/new", json={
        "searchPhrase": "orders", "preformedQuery": False, "partialSearch": True,
        "pagingCriteria": {"start": 0, "size": 10},
    })
    assert found.status_code == 201, found.text
    audit = admin.post("/auditevent/search", json={"fromTime": 0, "size": 10})
    assert audit.status_code == 200, audit.text


def test_every_operation_documents_its_errors_with_the_error_body(
        document: dict[str, Any]) -> None:
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["message", "errorCode", "status"]
    assert {"details", "fields", "retryAfter"} <= set(error["properties"])
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert "422" not in responses, (method, path)
            for status in ("400", "503"):
                content = responses[status]["content"]["application/json"]["schema"]
                assert content == {"$ref": "#/components/schemas/Error"}, (method, path, status)
            assert "Retry-After" in responses["503"]["headers"]
            if path not in ("/api/v2/login", "/api/v2/openapi.json"):
                assert {"401", "403"} <= set(responses), (method, path)


@pytest.mark.parametrize(("method", "path", "statuses"), [
    ("POST", "/search/new", {"201", "400", "401"}),
    ("POST", "/search/page", {"201", "400", "401", "404"}),
    ("POST", "/search/runFacet", {"201", "400", "401"}),
    ("POST", "/login", {"200", "400", "401", "429"}),
    ("DELETE", "/tag/{key}", {"204", "401", "403", "404", "409"}),
    ("PUT", "/user/{key}", {"400", "401", "403", "404", "409", "413"}),
    ("GET", "/dataresource/metadata", {"200", "400", "401", "404", "406"}),
])
def test_statuses_documented(document: dict[str, Any], method: str, path: str,
                             statuses: set[str]) -> None:
    responses = _operation(document, method, path)["responses"]
    assert statuses <= set(responses)
    assert "200" not in responses or "201" not in statuses


def test_login_documents_throttling_with_retry_after(document: dict[str, Any]) -> None:
    responses = _operation(document, "POST", "/login")["responses"]
    assert responses["429"]["headers"]["Retry-After"]["required"] is True
    assert "404" not in responses and "403" not in responses


def test_the_csv_overlap_documents_its_upload_and_its_csv_answer(
        document: dict[str, Any], admin: Http) -> None:
    operation = _operation(document, "POST", "/overlap/table/csv")
    form = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert form["required"] == ["fileStream"]
    assert form["properties"]["fileStream"] == form["properties"]["fileStream"] | {
        "type": "string", "format": "binary"}
    answer = operation["responses"]["201"]["content"]
    assert list(answer) == ["text/csv"]
    separator = next(p for p in operation["parameters"] if p["name"] == "separator")
    assert separator["schema"]["maxLength"] == 1

    sent = admin.post("/overlap/table/csv", files={"fileStream": ("in.csv", b"no.such,x.y\n")})
    # What the document says: JSON errors, CSV answers.
    assert sent.status_code in (400, 404)
    assert sent.headers["content-type"].startswith("application/json")


def test_names_carry_the_limits_the_validation_enforces(
        document: dict[str, Any], admin: Http) -> None:
    schemas = document["components"]["schemas"]
    name = schemas["UserCreate"]["properties"]["name"]
    assert (name["minLength"], name["maxLength"]) == (1, 255)
    pattern = re.compile(name["pattern"])
    for good in ("alice", " Ünïcode 名 ", "x" * 255):
        assert pattern.match(good), good
    for bad in ("", "   ", "a\x00b", "tab\tname", "zero\u200bwidth"):
        assert not pattern.match(bad), bad
        response = admin.post("/user", json={"name": bad})
        assert response.status_code == 400 and response.json()["errorCode"] == "INVALID_PAYLOAD"
    too_long = admin.post("/user", json={"name": "x" * 256})
    assert too_long.status_code == 400

    tag_name = re.compile(schemas["DomainIn"]["properties"]["name"]["pattern"])
    assert tag_name.match("Finance") and not tag_name.match("Fin.ance")

    review = schemas["ReviewIn"]["properties"]["rating"]
    assert (review["type"], review["minimum"], review["maximum"]) == ("integer", 1, 5)

    listed = _operation(document, "POST", "/tag/list")["requestBody"]["content"]
    assert listed["application/json"]["schema"]["maxItems"] == 1000

    table = next(p for p in _operation(document, "GET", "/overlap/table")["parameters"]
                 if p["name"] == "table1")
    assert re.match(table["schema"]["pattern"], "sales.orders")
    assert not re.match(table["schema"]["pattern"], "orders")
    refused = admin.get("/overlap/table", params={"table1": "orders", "table2": "a.b"})
    assert refused.status_code == 400


def test_strict_fields_are_documented_with_their_types(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    criteria = _resolve(document, schemas["SearchCriteria"])["properties"]
    assert criteria["preformedQuery"]["type"] == "boolean"
    assert _resolve(document, schemas["Paging"])["properties"]["size"]["type"] == "integer"


def _bodies(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every body an example is owed to: ``(where, media type, media object)`` for each JSON
    request body and each 2xx JSON or CSV answer of every operation."""
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                found.append((where + " request", "application/json", body))
            for status, response in operation["responses"].items():
                for media_type in ("application/json", "text/csv"):
                    media = response.get("content", {}).get(media_type)
                    if status.startswith("2") and media is not None:
                        found.append((f"{where} {status}", media_type, media))
    return found


def test_examples_are_given_and_match_their_schemas(document: dict[str, Any]) -> None:
    bodies = _bodies(document)
    named = {where for where, _, _ in bodies}
    for where in ("POST /api/v2/login request", "POST /api/v2/login 200",
                  "POST /api/v2/search/new request", "POST /api/v2/search/new 201",
                  "PUT /api/v2/dataresource/{key} request", "GET /api/v2/job/{key} 200",
                  "POST /api/v2/user/remove/role request", "POST /api/v2/overlap/table/csv 201",
                  "POST /api/v2/tagassociation/list request", "GET /api/v2/version 200"):
        assert where in named, where
    missing = sorted(where for where, _, media in bodies if "example" not in media)
    assert not missing, f"{len(missing)} bodies have no example: {', '.join(missing)}"
    for where, media_type, media in bodies:
        if media_type == "text/csv":
            assert isinstance(media["example"], str) and media["example"].count("\n") >= 2
            continue
        validator = Draft202012Validator({**media["schema"], "components": document["components"]})
        errors = [e.message for e in validator.iter_errors(media["example"])]
        assert not errors, (where, errors[:3])


def test_an_example_that_breaks_its_schema_is_caught(document: dict[str, Any]) -> None:
    # The check above must be able to fail: the example of a job, with its state a number.
    media = _operation(document, "GET", "/job/{key}")["responses"]["200"]["content"]
    broken = {**media["application/json"]["example"], "state": 3}
    schema = {**media["application/json"]["schema"], "components": document["components"]}
    assert list(Draft202012Validator(schema).iter_errors(broken))


def _payload_models() -> list[type[Payload]]:
    found, pending = [], [Payload]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        found.append(model)
    return found


def test_request_examples_are_taken_by_the_validation_that_parses_them(
        document: dict[str, Any]) -> None:
    # A schema can be looser than the parsing (a model validator, a parse of its own): the
    # examples must also pass what really reads the bodies.
    checked = []
    for model in _payload_models():
        extra = model.model_config.get("json_schema_extra")
        listed = extra.get("examples") if isinstance(extra, dict) else None
        for example in listed if isinstance(listed, list) else []:
            model.model_validate(example)
            checked.append(model.__name__)
    assert {"UserCreate", "SourceCreate", "AssociationIn", "ResourceChange"} <= set(checked)
    parse_update(examples.RESOURCE_CHANGE)
    RoleRemovals.model_validate(examples.ROLE_REMOVALS)


@pytest.mark.parametrize(("method", "path", "model"), [
    ("PUT", "/dataresource/{key}", "ResourceChange"),
    ("PUT", "/dataresource/source/{source_name}", "ResourceChange"),
    ("POST", "/user/remove/role", "RoleRemovals"),
    ("POST", "/tagassociation/list", "AssociationIn"),
])
def test_bodies_the_routes_read_themselves_are_documented(
        document: dict[str, Any], method: str, path: str, model: str) -> None:
    body = _operation(document, method, path)["requestBody"]
    assert body["required"] is True
    schema = body["content"]["application/json"]["schema"]
    ref = schema["items"]["$ref"] if schema.get("type") == "array" else schema["$ref"]
    assert ref == f"#/components/schemas/{model}"
    assert model in document["components"]["schemas"]


def test_a_resource_change_documents_what_people_may_write(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    change = schemas["ResourceChange"]
    assert set(change["properties"]) == set(WRITABLE)
    assert change["additionalProperties"] is False
    field = schemas[change["properties"]["fields"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(field["properties"]) == set(FIELD_WRITABLE)
    assert field["required"] == ["name"]


def test_role_removals_take_both_documented_forms(admin: Http,
                                                  document: dict[str, Any]) -> None:
    schema = {"$ref": "#/components/schemas/RoleRemovals",
              "components": document["components"]}
    validator = Draft202012Validator(schema)
    user = create_user(admin, f"removals-{uuid.uuid4().hex[:8]}",
                       roles=["Analyst", "Guest", "Steward"])
    for body in ({user["key"]: ["Guest"]}, {user["key"]: "Steward"}):
        assert validator.is_valid(body)
        response = admin.post("/user/remove/role", json=body)
        assert response.status_code == 201, response.text
    assert admin.get(f"/user/{user['key']}").json()["roles"] == ["Analyst"]
    refused: dict[str, Any]
    for refused in ({}, {user["key"]: []}, {user["key"]: ["\x00"]}):
        assert not validator.is_valid(refused)
        assert_error(admin.post("/user/remove/role", json=refused), 400, "INVALID_PAYLOAD")


def test_an_example_request_body_is_taken(admin: Http, document: dict[str, Any]) -> None:
    body = _operation(document, "POST", "/search/new")["requestBody"]["content"]
    found = admin.post("/search/new", json=body["application/json"]["example"])
    assert found.status_code == 201, found.text


def _success_schemas(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The schema of every 2xx JSON answer, by ``"METHOD path status"``."""
    return {f"{method.upper()} {path} {status}": media["schema"]
            for path, operations in document["paths"].items()
            for method, operation in operations.items()
            for status, response in operation["responses"].items()
            if status.startswith("2")
            and (media := response.get("content", {}).get("application/json")) is not None}


def test_every_success_answer_has_a_real_schema(document: dict[str, Any]) -> None:
    # An empty schema ({}) passes any answer: schemathesis's conformance check would be void.
    schemas = _success_schemas(document)
    assert len(schemas) > 60
    empty = sorted(where for where, schema in schemas.items()
                   if "$ref" not in schema and "type" not in schema)
    assert not empty, f"{len(empty)} success answers have no schema: {', '.join(empty)}"


def test_a_favorite_documents_both_of_its_answers(document: dict[str, Any]) -> None:
    responses = _operation(document, "POST", "/favorites/{entity_key}")["responses"]
    for status in ("200", "201"):
        schema = responses[status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/Favorite"}, status


@pytest.fixture(scope="module")
def lake(make_server: Callable[..., Server]) -> Server:
    """A catalog of the demo lake, both sources profiled by PROFILE jobs (joins discovered)."""
    return profiled_demo_catalog(make_server)


def _answers(http: Http) -> list[tuple[str, str, requests.Response]]:
    """``(method, documented path, answer)`` of the operations whose answers are built as
    plain dicts (schemas/answers.py), on real content."""
    found: list[tuple[str, str, requests.Response]] = []

    def call(method: str, path: str, documented: str | None = None,
             **kwargs: Any) -> requests.Response:
        response = http.request(method, path, **kwargs)
        found.append((method, documented or path, response))
        return response

    page = call("GET", "/dataresource/metadata", params={"pageSize": 100}).json()
    call("GET", "/dataresource/metadata", params={"pageSize": 3, "views": "viewFields,viewTags"})
    call("GET", "/dataresource/metadata", params={"pageSize": 3, "views": "resource_path"})
    call("GET", "/dataresource/metadata", params={"pageSize": 3, "properties": "name"})
    resources = page["list"]
    for resource in resources:
        call("GET", f"/dataresource/{resource['key']}", "/dataresource/{key}")
    first, second = resources[0], resources[1]
    call("GET", f"/dataresource/source/{first['dataSourceName']}",
         "/dataresource/source/{source_name}", params={"resourcePath": first["resourcePath"]})
    call("PUT", f"/dataresource/{first['key']}", "/dataresource/{key}",
         json={"description": "Checked against the document"})
    call("PUT", f"/dataresource/source/{second['dataSourceName']}",
         "/dataresource/source/{source_name}", params={"resourcePath": second["resourcePath"]},
         json={"owner": "contract@example.com"})
    call("POST", "/search/new", json={"searchPhrase": "orders"})
    call("POST", "/search/runFacet", json={"facetSelections": [
        {"facetName": "dataSource", "facetCategories": [first["dataSourceName"]]}]})
    call("POST", "/search/page", json={"pagingCriteria": {"start": 0, "size": 5}})
    call("GET", "/search/facets")
    call("GET", "/joincondition")
    call("POST", f"/favorites/{first['key']}", "/favorites/{entity_key}")
    call("POST", f"/favorites/{first['key']}", "/favorites/{entity_key}")
    call("GET", "/favorites")
    review = call("POST", "/reviews", json={"entityKey": first["key"], "rating": 4}).json()
    call("GET", "/reviews", params={"entityKey": first["key"]})
    call("GET", "/reviews", params={"entityKey": second["key"]})
    call("GET", f"/reviews/{review['key']}", "/reviews/{key}")
    call("PUT", f"/reviews/{review['key']}", "/reviews/{key}", json={"title": "Useful"})
    for prop in call("GET", "/config").json():
        call("GET", f"/config/{prop['name']}", "/config/{name}")
    call("PUT", "/config/search.pageMax", "/config/{name}", json={"value": 50})
    call("PUT", "/config/search.pageMax", "/config/{name}", json={"value": None})
    tables = [r["resourcePath"] for r in resources if r["dataSourceType"] == "SQL"]
    call("GET", "/overlap/table", params={"table1": tables[0], "table2": tables[1]})
    call("POST", "/overlap/table", json=[{"tableOne": tables[0], "tableTwo": tables[1]}])
    call("GET", "/logout")
    return found


def _mismatches(document: dict[str, Any], method: str, path: str, status: int,
                body: Any) -> list[str]:
    responses = document["paths"]["/api/v2" + path][method.lower()]["responses"]
    if str(status) not in responses:
        return [f"{status} is not documented"]
    schema = responses[str(status)]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(body)]


def test_real_answers_match_their_documented_schemas(lake: Server) -> None:
    # Schemathesis runs on an empty catalog: resources, joins, tags and fields are only seen
    # here, where a profiled lake gives them.
    admin = lake.session()
    document: dict[str, Any] = admin.get("/openapi.json").json()
    answers = _answers(admin)
    bad = {f"{method} {path} {r.status_code}": found for method, path, r in answers
           if (found := _mismatches(document, method, path, r.status_code, r.json()))}
    assert not bad, bad
    statuses = {(method, path, r.status_code) for method, path, r in answers}
    assert {("POST", "/favorites/{entity_key}", 201),
            ("POST", "/favorites/{entity_key}", 200)} <= statuses
    # The nested shapes were there to be checked: fields with tags, joins with tags.
    joins = next(r.json() for m, p, r in answers if p == "/joincondition")
    assert joins["list"]
    resources = [r.json() for m, p, r in answers if p == "/dataresource/{key}" and m == "GET"]
    assert any(r["joinConditions"] for r in resources)
    assert any(f["tags"] for r in resources for f in r["fields"])


def test_an_answer_that_breaks_its_schema_is_caught(lake: Server) -> None:
    # The check above must be able to fail: a resource whose required number is null, a
    # favorite without its time, a search result without its key.
    admin = lake.session()
    document: dict[str, Any] = admin.get("/openapi.json").json()
    resource = admin.get("/dataresource/metadata", params={"pageSize": 1}).json()["list"][0]
    whole = admin.get(f"/dataresource/{resource['key']}").json()
    assert not _mismatches(document, "GET", "/dataresource/{key}", 200, whole)
    for broken in ({**whole, "rowCount": None}, {k: v for k, v in whole.items() if k != "key"},
                   {**whole, "fields": [{"name": "x"}]}):
        assert _mismatches(document, "GET", "/dataresource/{key}", 200, broken)
    assert _mismatches(document, "POST", "/favorites/{entity_key}", 201, {"entityKey": "k"})
    assert _mismatches(document, "POST", "/search/new", 201, {"entities": []})
    assert _mismatches(document, "POST", "/search/new", 200, {})
