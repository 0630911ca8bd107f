"""Settings of the catalog service, read from ``CATALOG_*`` environment variables.

Example::

    CATALOG_DB_URL=postgresql+psycopg://catalog@127.0.0.1/catalog catalog-nb serve
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from catalog_nb.contract import MAX_BODY_BYTES
from catalog_nb.server.profiling.object_uri import parse_object_uri


class Settings(BaseSettings):
    """Everything the service can be told; one object, passed to ``create_app``."""

    model_config = SettingsConfigDict(env_prefix="CATALOG_", extra="ignore")

    data_dir: Path = Field(
        default=Path.home() / ".catalog_nb",
        description="Folder for the embedded SQLite store and other service state.",
    )
    db_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the store; a SQLite file in data_dir when unset.",
    )
    admin_user: str = Field(default="admin", description="Administrator created on first start.")
    admin_password: str | None = Field(
        default=None, description="Password of that administrator; none means no bootstrap login."
    )
    session_idle_minutes: float = Field(default=120.0, gt=0)
    session_max_hours: float = Field(default=24.0, gt=0)
    login_max_failures: int = Field(default=5, ge=1, description="Failures before throttling.")
    login_lockout_seconds: float = Field(
        default=300.0, gt=0,
        description="Seconds one client stays locked out of a user name after "
        "login_max_failures failures; each further failure doubles it.",
    )
    login_client_max_failures: int = Field(
        default=20, ge=1,
        description="Failed logins from one client address, whatever the user names, before "
        "that client is throttled (password spraying).",
    )
    store_pool_size: int = Field(
        default=5, ge=1,
        description="PostgreSQL connections each service process keeps open for requests "
        "(SQLite keeps this plus store_max_overflow, and opens more without waiting).",
    )
    store_max_overflow: int = Field(
        default=10, ge=0,
        description="Further PostgreSQL connections each process may open for a burst of "
        "requests (serve --workers N warns when N processes could exceed max_connections).",
    )
    store_busy_timeout_seconds: float = Field(
        default=30.0, gt=0,
        description="How long a request waits for a store lock before answering 503.",
    )
    max_body_bytes: int = Field(default=MAX_BODY_BYTES, gt=0)
    gzip_minimum_size: int = Field(
        default=1024, ge=0,
        description="Answers at least this long (bytes) are gzip-compressed for clients that "
        "send Accept-Encoding: gzip; smaller ones gain too little to pay for it.",
    )
    gzip_level: int = Field(
        default=1, ge=0, le=9,
        description="gzip level of compressed answers (0: never compress). Level 1 compresses a "
        "metadata page about 20x at 4x the speed of level 9 (27x).",
    )
    cookie_secure: bool = Field(default=False, description="Send the session cookie over TLS only.")
    data_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        description="Folders FILE data sources may lie under (os.pathsep-separated in the env).",
    )
    object_roots: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Object-store prefixes (s3://bucket/prefix) FILE data sources may lie "
        "under (comma-separated in the env); none: no object-store source may be registered.",
    )
    build: str = Field(default="local", description="Build identifier reported by /version.")
    job_workers: int = Field(
        default=2, ge=1, le=32,
        description="Background workers that run browse/profile jobs (jobs of one source run "
        "one after another; a job on another source takes a free worker).",
    )
    job_isolation: Literal["process", "thread"] = Field(
        default="process",
        description="Where jobs run: 'process' (each worker owns a child process, so profiling "
        "never competes with requests for the interpreter lock) or 'thread' (in the service's "
        "process; an in-memory store always uses threads).",
    )
    search_page_max: int = Field(
        default=100, ge=1, le=10_000, description="Largest page /search/new and /search/page give."
    )
    profile_sample_rows: int = Field(
        default=100_000, ge=100,
        description="Rows per resource that the sample-based statistics read (counts see all).",
    )
    spark_master: str = Field(
        default="local[*]", min_length=1,
        description="Where PROFILE jobs with engine 'spark' run: local[N] (in the job process), "
        "spark://host:port (a standalone cluster) or sc://host:port (Spark Connect).",
    )
    job_heartbeat_seconds: float = Field(
        default=5.0, gt=0, description="How often a running job proves its worker is alive."
    )
    job_stale_seconds: float = Field(
        default=60.0, gt=0,
        description="A RUNNING job silent this long was left by a stopped process: FAILED.",
    )

    discovery_after_profile: bool = Field(
        default=True, description="Run tag discovery on what each PROFILE job profiled."
    )
    discovery_regex_timeout_ms: float = Field(
        default=100.0, gt=0, le=60_000,
        description="Longest a tag's regular expression may take on one sampled value; a "
        "pattern that takes longer is skipped for the field and reported in the job.",
    )
    discovery_min_learning_score: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="Least resemblance to the fields people tagged for a learning tag to be "
        "suggested.",
    )

    relations_after_profile: bool = Field(
        default=True,
        description="Discover the joins and lineage of what each PROFILE job profiled "
        "against the whole catalog (a DISCOVER job reruns it for everything).",
    )
    join_min_containment: float = Field(
        default=0.8, ge=0.0, le=1.0,
        description="Least estimated share of one field's distinct values found in another's "
        "for the pair to be a join candidate.",
    )
    join_min_distinct: int = Field(
        default=10, ge=1,
        description="Fields with fewer distinct values (flags, statuses) join only a small "
        "table's key named like them, holding every one of their values.",
    )
    lineage_min_containment: float = Field(
        default=0.9, ge=0.0, le=1.0,
        description="Least share of a file's fields and values found in an older file for "
        "INFERRED lineage between them.",
    )
    lineage_max_depth: int = Field(
        default=10, ge=1, le=1000, description="Deepest /lineage walk; larger requests are capped."
    )
    lineage_max_nodes: int = Field(
        default=500, ge=1, description="Most resources one /lineage answer holds (truncated)."
    )

    @field_validator("data_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: object) -> object:
        if isinstance(value, str):
            return [Path(p) for p in value.split(os.pathsep) if p.strip()]
        return value

    @field_validator("object_roots", mode="before")
    @classmethod
    def _split_object_roots(cls, value: object) -> object:
        # A root is a location only: endpoint and credentials belong to the sources.
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        roots = []
        for item in (str(i).strip() for i in items):
            if not item:
                continue
            parsed = parse_object_uri(item)
            if parsed.access_key or parsed.endpoint or parsed.region:
                raise ValueError(f"an object root is s3://bucket/prefix only, not {item!r}")
            roots.append(parsed.location)
        return roots

    @property
    def store_url(self) -> str:
        """The SQLAlchemy URL of the store (the SQLite default resolved into data_dir)."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{self.data_dir / 'catalog.sqlite3'}"
