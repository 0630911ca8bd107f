"""The service's JSON encoding (orjson, ``server/responses.py``) and gzip compression, through
real HTTP where it is an interface promise."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import json
import math

import numpy as np
import orjson
import pytest
import requests

from catalog_nb.server.responses import JSONResponse, dumps
from tests.conftest import Http, Server
from tests.server.helpers import assert_error


def test_values_json_cannot_spell_become_null_and_the_rest_is_plain_json() -> None:
    content = {
        "nan": math.nan, "inf": math.inf, "ninf": -math.inf, "nested": [{"x": math.nan}],
        "when": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "day": dt.date(2024, 1, 2),
        "bytes": b"caf\xc3\xa9", "np_int": np.int64(7), "np_float": np.float32(1.5),
        "array": np.array([1, 2]), "set": {3}, "tuple": (1, 2), 5: "int key", "text": "é\u2028",
    }
    decoded = json.loads(dumps(content))
    assert decoded == {
        "nan": None, "inf": None, "ninf": None, "nested": [{"x": None}],
        "when": "2024-01-02T03:04:05+00:00", "day": "2024-01-02", "bytes": "café", "np_int": 7,
        "np_float": 1.5, "array": [1, 2], "set": [3], "tuple": [1, 2], "5": "int key",
        "text": "é\u2028",
    }
    assert b" " not in dumps({"a": [1, 2]})  # compact, as Starlette's JSONResponse


def test_what_orjson_cannot_encode_falls_back_to_the_stdlib() -> None:
    huge = 2**70
    assert json.loads(dumps({"n": huge, "x": math.nan})) == {"n": huge, "x": None}
    assert json.loads(dumps([orjson.Fragment(b'{"a":1}'), huge])) == [{"a": 1}, huge]
    with pytest.raises(TypeError):
        dumps({"d": decimal.Decimal("1.5")})  # as before: no route answers one


def test_a_fragment_is_copied_as_it_is() -> None:
    body = JSONResponse({"list": [orjson.Fragment(b'{"k":"v"}')], "n": 1}).body
    assert body == b'{"list":[{"k":"v"}],"n":1}'


def test_large_answers_are_gzipped_for_clients_that_accept_it(
    live_server: Server, admin: Http
) -> None:
    url = f"{live_server.api}/openapi.json"
    plain = requests.get(url, headers={"Accept-Encoding": "identity"}, timeout=30)
    zipped = requests.get(url, headers={"Accept-Encoding": "gzip"}, stream=True, timeout=30)
    assert "content-encoding" not in plain.headers
    assert zipped.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in zipped.headers.get("vary", "").lower()
    raw = zipped.raw.read()
    assert len(raw) < len(plain.content) / 3
    assert json.loads(gzip.decompress(raw)) == plain.json()
    # Small answers are not worth compressing.
    small = admin.get("/version", headers={"Accept-Encoding": "gzip"})
    assert small.status_code == 200 and "content-encoding" not in small.headers


def test_error_bodies_stay_json_under_gzip(admin: Http) -> None:
    response = admin.get("/dataresource/no-such-key", headers={"Accept-Encoding": "gzip"})
    assert_error(response, 404, "RESOURCE_NOT_FOUND")
    response = admin.get("/dataresource/metadata", params={"cursor": "x" * 2000},
                         headers={"Accept-Encoding": "gzip"})
    assert_error(response, 400, "INVALID_CURSOR")
