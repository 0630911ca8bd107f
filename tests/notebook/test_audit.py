"""The audits of ``catalog_nb.notebook.audit`` against a real service with profiled demo data.

One server per module: the demo lake (files and SQL) profiled through the client, so
discovery's suggestions are real, plus a data source holding a file that cannot be parsed.
The module then sets up what each audit must find (an accepted sensitive tag, a role granted
one source, users without email, an unused tag, an empty domain...). The same audits run on a
snapshot of that catalog and must agree.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import Catalog, connect
from catalog_nb.client.frames import DTYPES, empty_frame
from catalog_nb.client.resources.frames import RESOURCE_COLUMNS, RESOURCE_FIELD_COLUMNS
from catalog_nb.client.resources.sources import SOURCE_COLUMNS
from catalog_nb.client.roles import ROLE_COLUMNS
from catalog_nb.client.tags.frames import ASSOCIATION_COLUMNS, TAG_COLUMNS, TAG_DOMAIN_COLUMNS
from catalog_nb.client.users import USER_COLUMNS
from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.notebook import audit
from catalog_nb.snapshot import open_snapshot
from tests.client.mocks import LIVE_PASSWORD

FILES, SQL = "demo_files", "demo_sql"
CUSTOMERS = "crm/customers.csv"


@dataclass
class World:
    cat: Catalog
    analyst: str  # holds only the role granted demo_files
    nomail: str  # no email, only the default role
    granted_role: str
    sql_role: str
    wide_role: str
    orphan: str  # full name of an unused tag
    used_child: str
    unused_parent_of_used: str
    empty_domain: str
    documented: str  # path of the fully documented resource
    half_documented: str  # path with a description but no owner
    snapshot: Path


def _uid() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture(scope="module")
def world(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    root = tmp_path_factory.mktemp("audit-lake")
    build_lake(root / "acme", scale=0.05)
    broken = root / "broken"
    broken.mkdir()
    (broken / "bad.parquet").write_bytes(b"this is not a parquet file")
    (broken / "fine.csv").write_text("id,name\n1,a\n")
    server = make_server(data_roots=[root])
    cat = connect(server.url, server.admin_user, server.admin_password, progress=False)
    for source in lake_sources(root / "acme"):
        cat.create_source(source["name"], source["uri"], source["sourceType"])
        cat.profile(source["name"], timeout=300, poll_interval=0.25)
    cat.create_source("broken", str(broken), "FILE")
    with pytest.warns(UserWarning, match="bad.parquet"):
        cat.profile("broken", timeout=120, poll_interval=0.05)

    sources = cat.sources().set_index("name")["key"]
    granted = cat.create_role(f"Files{_uid()}", "Analyst", data_source_keys=[sources[FILES]])
    sql_only = cat.create_role(f"Sql{_uid()}", "Analyst", data_source_keys=[sources[SQL]])
    wide = cat.create_role(f"Wide{_uid()}", "Analyst", metadata_access_option="ALL")
    analyst = cat.create_user(f"ana{_uid()}", roles=[granted["name"]], email="ana@example.org",
                              password=LIVE_PASSWORD)
    cat.create_user(f"sq{_uid()}", roles=[sql_only["name"]], email="s@example.org",
                    password=LIVE_PASSWORD)
    nomail = cat.create_user(f"nomail{_uid()}", password=LIVE_PASSWORD)

    cat.tag((FILES, CUSTOMERS), "Sensitive.EmailAddress", field="contact", state="ACCEPTED")
    domain = f"Audit{_uid()}"
    cat.create_tag_domain(domain, "audit test")
    cat.create_tags([{"full_name": f"{domain}.Orphan"}, {"full_name": f"{domain}.Parent"},
                     {"full_name": f"{domain}.Parent.Child"}])
    cat.tag((FILES, CUSTOMERS), f"{domain}.Parent.Child")
    empty = f"Empty{_uid()}"
    cat.create_tag_domain(empty, "holds nothing")
    cat.update_resource(FILES, "crm/customers_clean.csv", description="Clean customers",
                        owner="ana")
    cat.update_resource(FILES, "hr/employees.csv", description="Staff")
    snapshot = tmp_path_factory.mktemp("audit-snap") / "snap"
    cat.snapshot(snapshot)
    yield World(
        cat=cat, analyst=analyst["name"], nomail=nomail["name"], granted_role=granted["name"],
        sql_role=sql_only["name"], wide_role=wide["name"], orphan=f"{domain}.Orphan",
        used_child=f"{domain}.Parent.Child", unused_parent_of_used=f"{domain}.Parent",
        empty_domain=empty, documented="crm/customers_clean.csv",
        half_documented="hr/employees.csv", snapshot=snapshot,
    )
    cat.close()


def _check_columns(frame: pd.DataFrame) -> None:
    assert list(frame.columns) == [c.name for c in audit.FINDING_COLUMNS]
    assert [str(t) for t in frame.dtypes] == [DTYPES[c.kind] for c in audit.FINDING_COLUMNS]
    assert frame["severity"].isin(audit.SEVERITIES).all()
    assert frame["detail"].notna().all() and (frame["detail"].str.len() > 20).all()


def test_unreviewed_sensitive_fields(world: World) -> None:
    found = audit.unreviewed_sensitive(world.cat)
    _check_columns(found)
    customers = found[(found.source == FILES) & (found.path == CUSTOMERS)].set_index("field")
    # the accepted email tag settles the contact field; the phone number is still pending
    assert "contact" not in customers.index
    assert customers.loc["reach_no", "tag"] == "Sensitive.PhoneNumber"
    assert customers.loc["reach_no", "severity"] == "medium"
    assert customers.loc["ident", "sensitivity"] == "RESTRICTED"
    assert customers.loc["ident", "severity"] == "high"
    assert "Sensitive.NationalId" in customers.loc["ident", "detail"]
    assert list(found["severity"]) == sorted(found["severity"], key=audit.SEVERITIES.index)
    # only RESTRICTED counts when asked: the CONFIDENTIAL phone number drops out
    strict = audit.unreviewed_sensitive(world.cat, sensitivities=["RESTRICTED"])
    assert not ((strict.path == CUSTOMERS) & (strict.field == "reach_no")).any()


def test_sensitive_exposure_by_role_with_users(world: World) -> None:
    found = audit.sensitive_exposure(world.cat)
    _check_columns(found)
    email = found[found.tag == "Sensitive.EmailAddress"]
    granted = email[email.role == world.granted_role]
    assert len(granted) == 1
    row = granted.iloc[0]
    assert row["source"] == FILES and row["users"] == [world.analyst]
    assert row["severity"] == "medium" and row["sensitivity"] == "CONFIDENTIAL"
    assert row["count"] == 1 and world.analyst in row["detail"]
    # the role granted only the SQL source does not see the file's email field
    assert world.sql_role not in set(found.role)
    # ALL metadata access sees it (nobody holds it: low); administrators are info
    assert email.loc[email.role == world.wide_role, "severity"].tolist() == ["low"]
    assert email.loc[email.role == "Administrator", "severity"].tolist() == ["info"]
    # suggestions count only when asked
    with_suggested = audit.sensitive_exposure(world.cat, include_suggested=True)
    assert len(with_suggested) > len(found)
    assert "Sensitive.NationalId" in set(with_suggested.tag)


def test_undocumented_resources(world: World) -> None:
    found = audit.undocumented(world.cat)
    _check_columns(found)
    paths = found[found.source == FILES].set_index("path")
    assert world.documented not in paths.index
    assert paths.loc[world.half_documented, "severity"] == "low"
    assert "owner" in paths.loc[world.half_documented, "detail"]
    assert paths.loc[CUSTOMERS, "severity"] == "medium"
    assert set(found.object_type) == {"resource"}


def test_stale_profiles_and_errors(world: World) -> None:
    found = audit.stale_profiles(world.cat)
    _check_columns(found)
    errors = found[found.severity == "high"]
    assert errors["path"].tolist() == ["bad.parquet"]
    assert "failed" in errors.iloc[0]["detail"]
    # the members of a profiled collection are never flagged as never profiled
    assert not found["path"].str.startswith("sales/orders/").any()
    later = pd.Timestamp.now(tz="UTC") + pd.Timedelta(days=200)
    old = audit.stale_profiles(world.cat, stale_days=90, now=later)
    low = old[old.severity == "low"]
    assert CUSTOMERS in set(low.path) and (low["age_days"] > 199).all()
    assert low["when"].notna().all()
    with pytest.raises(ValueError, match="stale_days"):
        audit.stale_profiles(world.cat, stale_days=-1)


def test_pending_suggestions_by_age(world: World) -> None:
    found = audit.pending_suggestions(world.cat)
    _check_columns(found)
    pending = world.cat.associations(state="SUGGESTED")
    assert len(found) == len(pending) and set(found.severity) == {"low"}
    assert set(found["key"]) == set(pending["key"])
    later = pd.Timestamp.now(tz="UTC") + pd.Timedelta(days=45)
    aged = audit.pending_suggestions(world.cat, now=later, old_days=30)
    assert set(aged.severity) == {"medium"} and (aged["age_days"] >= 45).all()
    assert list(aged["age_days"]) == sorted(aged["age_days"], reverse=True)
    assert audit.pending_suggestions(world.cat, min_age_days=10).empty


def test_orphan_tags_and_empty_domains(world: World) -> None:
    found = audit.orphan_tags(world.cat)
    _check_columns(found)
    tags = set(found.loc[found.object_type == "tag", "object"])
    assert world.orphan in tags
    assert world.used_child not in tags and world.unused_parent_of_used not in tags
    assert "Sensitive.EmailAddress" not in tags  # accepted on a field
    domains = found[found.object_type == "tag_domain"]
    assert world.empty_domain in set(domains.object)
    assert found.loc[found.object == world.orphan, "severity"].item() == "low"


def test_user_and_role_hygiene(world: World) -> None:
    found = audit.user_role_hygiene(world.cat)
    _check_columns(found)
    nomail = found[found.object == world.nomail]
    assert len(nomail) == 2 and set(nomail.severity) == {"low"}
    assert nomail["detail"].str.contains("no email").any()
    assert nomail["detail"].str.contains("default role Analyst").any()
    admins = found[found.detail.str.contains("is an administrator")]
    assert admins["object"].tolist() == ["admin"] and admins["severity"].tolist() == ["info"]
    roles = found[found.object_type == "role"].set_index("object")
    assert roles.loc[world.wide_role, "severity"] == "medium"
    assert roles.loc["Administrator", "severity"] == "info"
    assert world.granted_role not in roles.index
    strict = audit.user_role_hygiene(world.cat, max_admins=0)
    strict_admins = strict[strict.detail.str.contains("is an administrator")]
    assert strict_admins["severity"].tolist() == ["medium"]
    assert "more than 0" in strict_admins.iloc[0]["detail"]


def test_run_all_gathers_every_audit(world: World) -> None:
    found = audit.run_all(world.cat, stale_days=30, max_admins=2)
    _check_columns(found)
    assert set(found.audit) == set(audit.AUDITS)
    ranks = found["severity"].map(audit.SEVERITIES.index)
    assert ranks.is_monotonic_increasing
    only = audit.run_all(world.cat, audits=["orphan_tags"])
    assert set(only.audit) == {"orphan_tags"}
    with pytest.raises(TypeError, match="no audit takes stale_dayz"):
        audit.run_all(world.cat, stale_dayz=3)
    with pytest.raises(ValueError, match="unknown audit"):
        audit.run_all(world.cat, audits=["nope"])


def test_audits_run_on_a_snapshot_alike(world: World) -> None:
    snap = open_snapshot(world.snapshot)
    offline = audit.run_all(snap)
    live = audit.run_all(world.cat, now=snap.taken_at)
    pd.testing.assert_frame_equal(offline, live)
    assert (offline.audit == "pending_suggestions").any()


def test_audits_of_an_empty_catalog_keep_their_columns() -> None:
    class Empty:
        def users(self) -> pd.DataFrame:
            return empty_frame(USER_COLUMNS)

        def roles(self) -> pd.DataFrame:
            return empty_frame(ROLE_COLUMNS)

        def sources(self) -> pd.DataFrame:
            return empty_frame(SOURCE_COLUMNS)

        def tag_domains(self) -> pd.DataFrame:
            return empty_frame(TAG_DOMAIN_COLUMNS)

        def tags(self) -> pd.DataFrame:
            return empty_frame(TAG_COLUMNS)

        def associations(self) -> pd.DataFrame:
            return empty_frame(ASSOCIATION_COLUMNS)

        def resources(self) -> pd.DataFrame:
            return empty_frame(RESOURCE_COLUMNS)

        def fields(self) -> pd.DataFrame:
            return empty_frame(RESOURCE_FIELD_COLUMNS)

    found = audit.run_all(Empty())
    assert found.empty
    _check_columns(found)
