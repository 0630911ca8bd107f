"""The interactive docs describe what the service really answers."""

from __future__ import annotations

from tests.conftest import Server


def test_openapi_documents_400_errors_and_no_422(live_server: Server) -> None:
    spec = live_server.anonymous().get("/openapi.json").json()
    operations = [op for path in spec["paths"].values() for op in path.values()]
    assert len(operations) > 40
    assert all("422" not in op["responses"] for op in operations)
    assert all("400" in op["responses"] for op in operations)
    error = spec["components"]["schemas"]["Error"]
    assert error["required"] == ["message", "errorCode", "status"]
    assert "/api/v2/dataresource/metadata" in spec["paths"]


def test_docs_page_is_served(live_server: Server) -> None:
    page = live_server.anonymous().get("/docs")
    assert page.status_code == 200 and "swagger" in page.text.lower()
