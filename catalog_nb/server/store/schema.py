"""Tables of the catalog store (SQLAlchemy Core), one metadata object for every family.

Names are unique case-insensitively: each named table keeps ``name_fold`` (the case-folded name)
under a unique constraint, so two requests racing to create "Alice" and "alice" cannot both win.
Times are epoch milliseconds (BigInteger) so the wire and the store agree without conversion.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    event,
)

from catalog_nb.contract import MAX_NAME_LENGTH

metadata = MetaData()

KEY = 40


def _key() -> Column[str]:
    return Column("key", String(KEY), primary_key=True)


def _times() -> list[Column[int]]:
    return [
        Column("created_ms", BigInteger, nullable=False),
        Column("changed_ms", BigInteger, nullable=False),
    ]


#: Case folding can triple a name's length ("ß" -> "ss", "ΐ" -> three code points).
FOLD_LENGTH = 3 * MAX_NAME_LENGTH


def _named() -> list[Column[str]]:
    return [
        Column("name", String(MAX_NAME_LENGTH), nullable=False),
        Column("name_fold", String(FOLD_LENGTH), nullable=False, unique=True),
    ]


schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("description", Text, nullable=False),
    Column("applied_ms", BigInteger, nullable=False),
)

users = Table(
    "users",
    metadata,
    _key(),
    *_named(),
    Column("description", Text),
    Column("rich_description", Text),
    Column("attributes", JSON, nullable=False),
    Column("prefilters_enabled", Boolean, nullable=False, default=False),
    Column("password_hash", String(255)),
    *_times(),
)

roles = Table(
    "roles",
    metadata,
    _key(),
    *_named(),
    Column("access_level", String(32), nullable=False),
    Column("description", Text),
    Column("rich_description", Text),
    Column("default_role", Boolean, nullable=False, default=False),
    Column("metadata_access_option", String(32), nullable=False),
    Column("data_access_option", String(32), nullable=False),
    Column("resource_read_access_level", String(64)),
    Column("job_template_creation_allowed", Boolean, nullable=False, default=False),
    Column("job_execution_allowed", Boolean, nullable=False, default=False),
    *_times(),
)

# What a role is granted: data sources, virtual folders, data sets and tag domains, by key.
role_grants = Table(
    "role_grants",
    metadata,
    Column("role_key", String(KEY), ForeignKey("roles.key", ondelete="CASCADE"), primary_key=True),
    Column("kind", String(32), primary_key=True),
    Column("target_key", String(KEY), primary_key=True),
)

user_roles = Table(
    "user_roles",
    metadata,
    Column("user_key", String(KEY), ForeignKey("users.key", ondelete="CASCADE"), primary_key=True),
    Column("role_key", String(KEY), ForeignKey("roles.key"), primary_key=True),
    Column("assigned_by", String(MAX_NAME_LENGTH)),
    Column("assigned_ms", BigInteger, nullable=False),
)
Index("ix_user_roles_role", user_roles.c.role_key)

# Only a hash of the session token is stored: a copy of the store does not hand out sessions.
sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user_key", String(KEY), ForeignKey("users.key", ondelete="CASCADE"), nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("last_seen_ms", BigInteger, nullable=False),
    Column("client_address", String(64)),
)
Index("ix_sessions_user", sessions.c.user_key)

#: Counters of changes that processes caching what they read check on every request, one row
#: each (``name``, ``generation``). ``auth`` counts the changes to who users are and what their
#: roles grant: triggers bump it in the transaction of every write to the ``AUTH_TABLES``,
#: whoever writes (a request, the CLI, another process, an administrator in psql), so a process
#: that cached a caller's roles sees at the cost of one row whether it may still use them
#: (``catalog_nb.server.callers``). ``catalog`` counts every other change to what the catalog
#: holds: ``Store`` bumps it when it commits a transaction that wrote any table but the
#: ``UNCOUNTED_TABLES`` (``catalog_nb.server.read_cache``).
store_generations = Table(
    "store_generations",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("generation", BigInteger, nullable=False),
)
#: The tables whose writes bump the ``auth`` generation (sessions are read on every request).
AUTH_TABLES = ("users", "user_roles", "roles", "role_grants")
#: Tables whose writes are no change to what the catalog shows: request bookkeeping, job
#: progress, a caller's stored search results, the counters themselves. A write to any other
#: table bumps ``catalog`` (so a search must not: every one stores its result).
UNCOUNTED_TABLES = frozenset({"sessions", "login_throttle", "audit_events", "jobs",
                              "staged_fields", "store_generations", "schema_version",
                              "stored_searches"})


def install_generations(conn: Connection) -> None:
    """Give ``store_generations`` its rows and the triggers that bump ``auth`` (idempotent)."""
    for name in ("auth", "catalog"):
        conn.exec_driver_sql(
            f"INSERT INTO store_generations (name, generation) SELECT '{name}', 0 "
            f"WHERE NOT EXISTS (SELECT 1 FROM store_generations WHERE name = '{name}')"
        )
    bump = "UPDATE store_generations SET generation = generation + 1 WHERE name = 'auth'"
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(
            "CREATE OR REPLACE FUNCTION bump_auth_generation() RETURNS trigger LANGUAGE plpgsql "
            f"AS $$ BEGIN {bump}; RETURN NULL; END $$"
        )
        for table in AUTH_TABLES:
            # DROP + CREATE: CREATE OR REPLACE TRIGGER needs PostgreSQL 14.
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {table}_bump_auth_generation ON {table}")
            conn.exec_driver_sql(
                f"CREATE TRIGGER {table}_bump_auth_generation "
                f"AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_generation()"
            )
        return
    for table in AUTH_TABLES:
        for action in ("INSERT", "UPDATE", "DELETE"):
            conn.exec_driver_sql(
                f"CREATE TRIGGER IF NOT EXISTS {table}_{action.lower()}_bumps_auth_generation "
                f"AFTER {action} ON {table} BEGIN {bump}; END"
            )


@event.listens_for(metadata, "after_create")
def _after_create(_target: MetaData, connection: Connection, **kw: Any) -> None:
    # After every table of a new store exists (the triggers name four of them); a migration
    # creating other tables later leaves it alone.
    if store_generations in (kw.get("tables") or ()):
        install_generations(connection)


#: Failed-login counts, one row per throttled scope: a user name tried from one client address
#: (``account:<client> <name>``) or a client address whatever the names (``client:<client>``).
login_throttle = Table(
    "login_throttle",
    metadata,
    Column("scope", String(FOLD_LENGTH + 100), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
    Column("locked_until_ms", BigInteger),
)

audit_events = Table(
    "audit_events",
    metadata,
    _key(),
    Column("time_ms", BigInteger, nullable=False),
    Column("user_key", String(KEY)),
    Column("user_name", String(MAX_NAME_LENGTH)),
    Column("action", String(32), nullable=False),
    Column("object_type", String(32), nullable=False),
    # Text: a refused request may name any key (whatever was in the path), and is still recorded.
    Column("object_key", Text),
    Column("object_name", Text),
    Column("outcome", String(16), nullable=False),
    Column("message", Text),
    Column("client_address", String(64)),
)
Index("ix_audit_time", audit_events.c.time_ms)
Index("ix_audit_user", audit_events.c.user_name)

data_sources = Table(
    "data_sources",
    metadata,
    _key(),
    *_named(),
    Column("description", Text),
    Column("source_type", String(16), nullable=False),
    Column("uri", Text, nullable=False),
    Column("include_patterns", JSON, nullable=False),
    Column("exclude_patterns", JSON, nullable=False),
    # what computes its PROFILE jobs when a job names no engine (local | spark)
    Column("engine", String(16), nullable=False, server_default="local"),
    *_times(),
)

# A data resource exists only because browsing or profiling found it. Its system-owned
# properties are written by the service's own processing (store/ingest.py); people write only
# description, rich_description, owner and custom property values.
data_resources = Table(
    "data_resources",
    metadata,
    _key(),
    Column("data_source_key", String(KEY), ForeignKey("data_sources.key"), nullable=False),
    Column("path", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("resource_type", String(64), nullable=False),
    # The collection a partition file belongs to (members stay reachable by their own path).
    Column("collection_key", String(KEY), ForeignKey("data_resources.key", ondelete="SET NULL")),
    Column("file_format", String(32)),
    Column("separator", String(8)),
    Column("header", Boolean, nullable=False, default=False),
    Column("header_row", Integer, nullable=False, default=0),
    Column("encoding", String(32)),
    Column("row_count", BigInteger),
    Column("resource_size", BigInteger),
    Column("field_count", Integer),
    Column("partition_count", Integer, nullable=False, default=0),
    # OK | ERROR (resourceState) and BROWSED | PROFILED | ERROR | MISSING (status).
    Column("resource_state", String(16), nullable=False),
    Column("status", String(32), nullable=False),
    Column("error_msg", Text),
    # StatusDetail list: one entry per processing stage (browse, profile, discover).
    Column("detailed_status", JSON, nullable=False),
    # Source-specific details: SQL keys and view definition, file reading warnings.
    Column("extra", JSON, nullable=False),
    Column("database_name", Text),
    Column("data_schema_name", Text),
    Column("table_name", Text),
    Column("table_type", String(32)),
    Column("time_of_resource_creation", BigInteger),
    Column("time_of_resource_change", BigInteger),
    Column("time_of_last_profile", BigInteger),
    Column("time_of_last_refresh", BigInteger),
    Column("description", Text),
    Column("rich_description", Text),
    Column("owner", String(MAX_NAME_LENGTH)),
    # Written by the search index refresh (store/search.py), never by people: the resource's
    # field data types as a bit mask (search/facets.py FIELD_TYPE_BITS) and its sensitivity
    # (the highest of its ACCEPTED tags', or NONE), so that facet counts read them with the other
    # facet columns from one index entry instead of a join.
    Column("facet_field_types", Integer, nullable=False, default=0, server_default="0"),
    Column("facet_sensitivity", String(32)),
    *_times(),
    UniqueConstraint("data_source_key", "path", name="uq_resource_path"),
)
Index("ix_resources_source", data_resources.c.data_source_key)
Index("ix_resources_changed", data_resources.c.time_of_resource_change)
#: Searches read what they count and sort by from this index alone, one entry per match found
#: by key (or a scan of it, for a facet-only search), never the wide rows.
resource_facets = Index(
    "ix_resources_facets", data_resources.c.key, data_resources.c.data_source_key,
    data_resources.c.resource_type, data_resources.c.file_format, data_resources.c.owner,
    data_resources.c.resource_size, data_resources.c.time_of_resource_change,
    data_resources.c.facet_field_types, data_resources.c.facet_sensitivity,
    data_resources.c.name,
)
#: Metadata pages are read by keyset in code-point order of the path within a source. SQLite's
#: unique (source, path) index is in that order already; PostgreSQL's follows the database's
#: locale, so it gets one of its own.
#: The first page of a facet-only search is read in name order from this index (code-point
#: order: SQLite's own, a "C" collation on PostgreSQL), stopping at the page's last match. On
#: SQLite it holds the facet columns too: otherwise the planner prefers scanning the other
#: covering index whole and sorting every match to fetching rows from this one.
resource_names = Index(
    "ix_resources_name", data_resources.c.name, data_resources.c.key,
    data_resources.c.data_source_key, data_resources.c.resource_type,
    data_resources.c.file_format, data_resources.c.owner, data_resources.c.resource_size,
    data_resources.c.time_of_resource_change, data_resources.c.facet_field_types,
    data_resources.c.facet_sensitivity,
).ddl_if(dialect="sqlite")
resource_names_in_code_points = Index(
    "ix_resources_name_c", data_resources.c.name.collate("C"), data_resources.c.key,
).ddl_if(dialect="postgresql")
resource_paths_in_code_points = Index(
    "ix_resources_source_path_c", data_resources.c.data_source_key,
    data_resources.c.path.collate("C"),
).ddl_if(dialect="postgresql")

resource_fields = Table(
    "resource_fields",
    metadata,
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("name", Text, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("display_name", Text),
    Column("description", Text),
    Column("comment", Text),
    Column("data_type", String(32), nullable=False),
    Column("nullable", Boolean, nullable=False, default=True),
    # {density, valueCount, distinctCount, min, max, mean, mostFrequent, patterns, ...}
    Column("properties", JSON, nullable=False),
    # The value sketch of profiling/sketch.py, for join and tag discovery.
    Column("sketch", JSON),
)

# The fields of a wide profile on their way into resource_fields (store/staging.py): written in
# short batches, then moved in by set-based statements, so no row crosses to Python while the
# write lock is held.
# ``job_key`` names the job that staged them; rows of a job no longer RUNNING are left by a
# stopped process and are swept. No foreign keys: nothing may block or cascade into the staging.
staged_fields = Table(
    "staged_fields",
    metadata,
    Column("staging_key", String(KEY), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("job_key", String(KEY), nullable=False),
    Column("name", Text, nullable=False),
    Column("data_type", String(32), nullable=False),
    Column("nullable", Boolean, nullable=False, default=True),
    Column("properties", JSON, nullable=False),
    Column("sketch", JSON),
    Column("created_ms", BigInteger, nullable=False),
)
# move() matches staged fields to stored ones by name.
Index("ix_staged_fields_name", staged_fields.c.staging_key, staged_fields.c.name)

# Definitions of custom properties; values live per resource in resource_custom_values.
custom_properties = Table(
    "custom_properties",
    metadata,
    _key(),
    *_named(),
    Column("display_name", Text),
    Column("description", Text),
    Column("type", String(32), nullable=False),
    Column("facet_able", Boolean, nullable=False, default=False),
    *_times(),
)

resource_custom_values = Table(
    "resource_custom_values",
    metadata,
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column(
        "property_key", String(KEY), ForeignKey("custom_properties.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("value", JSON),
)

# Background jobs (browse, profile, discover) with persisted state, so a restart can tell what
# was left unfinished.
jobs = Table(
    "jobs",
    metadata,
    _key(),
    Column("job_type", String(16), nullable=False),
    Column("data_source_key", String(KEY), ForeignKey("data_sources.key"), nullable=False),
    Column("resource_path", Text),
    # QUEUED | RUNNING | SUCCEEDED | FAILED
    Column("state", String(16), nullable=False),
    Column("progress", Float, nullable=False, default=0.0),
    Column("total", Integer),
    Column("done", Integer, nullable=False, default=0),
    # what ``progress`` measures: bytes (files read) or resources; the amount of all and done
    Column("work_unit", String(16)),
    Column("work_total", BigInteger),
    Column("work_done", BigInteger),
    # {created, updated, unchanged, skipped, errors}
    Column("counts", JSON, nullable=False),
    # [{path, message}] of resources that could not be processed
    Column("errors", JSON, nullable=False),
    Column("message", Text),
    Column("requested_by", String(MAX_NAME_LENGTH)),
    # what computes a PROFILE job (local | spark) and who ran the job (a worker's name)
    Column("engine", String(16), nullable=False, server_default="local"),
    Column("worker", String(MAX_NAME_LENGTH)),
    Column("started_ms", BigInteger),
    Column("finished_ms", BigInteger),
    *_times(),
)
Index("ix_jobs_state", jobs.c.state)

tag_domains = Table(
    "tag_domains",
    metadata,
    _key(),
    *_named(),
    Column("description", Text),
    # Built-in domains (created on first start) cannot be renamed or deleted.
    Column("immutable", Boolean, nullable=False, default=False),
    # The product's display colour of the domain (free text such as "#1B5E20"); migration 16.
    Column("color", String(32)),
    *_times(),
)

# Tags form a tree per domain; full_name is the dotted path Domain.Parent.Child. Names are unique
# among siblings: parent_scope is the parent's key, or "" at the root, because NULLs never
# collide in a unique constraint.
tags = Table(
    "tags",
    metadata,
    _key(),
    Column("domain_key", String(KEY), ForeignKey("tag_domains.key"), nullable=False),
    Column("parent_key", String(KEY), ForeignKey("tags.key")),
    Column("parent_scope", String(KEY), nullable=False),
    Column("name", String(MAX_NAME_LENGTH), nullable=False),
    Column("name_fold", String(FOLD_LENGTH), nullable=False),
    Column("full_name", Text, nullable=False),
    Column("description", Text),
    Column("rich_description", Text),
    Column("tag_state", String(16), nullable=False),  # VALUE | REGEX
    Column("state", String(16), nullable=False),  # ACCEPTED | REJECTED | SUGGESTED
    Column("enable", Boolean, nullable=False, default=True),
    Column("learning_enabled", Boolean, nullable=False, default=False),
    Column("immutable", Boolean, nullable=False, default=False),
    Column("min_score", Float),
    Column("reg_ex", Text),
    Column("regex_min_len", Integer),
    Column("regex_max_len", Integer),
    Column("regex_filter_class", String(64)),
    Column("synonyms", JSON, nullable=False),
    Column("sensitivity", String(32)),
    Column("external_id", Text),
    Column("external_source_name", Text),
    *_times(),
    UniqueConstraint("domain_key", "parent_scope", "name_fold", name="uq_tag_sibling"),
)
Index("ix_tags_domain", tags.c.domain_key)

# One association per (resource, field or none, tag); field_scope is the field name, or "" for
# the resource itself, for the same reason as tags.parent_scope.
tag_associations = Table(
    "tag_associations",
    metadata,
    _key(),
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("field_scope", Text, nullable=False),
    Column("tag_key", String(KEY), ForeignKey("tags.key", ondelete="CASCADE"), nullable=False),
    Column("state", String(16), nullable=False),
    Column("semantic", String(32)),
    Column("description", Text),
    # Discovery's confidence (0-1) and the rules that fired; null for what people wrote.
    Column("weight", Float),
    Column("rules", JSON, nullable=False),
    Column("created_by", String(MAX_NAME_LENGTH)),
    Column("changed_by", String(MAX_NAME_LENGTH)),
    *_times(),
    UniqueConstraint("resource_key", "field_scope", "tag_key", name="uq_tag_association"),
)
Index("ix_tag_associations_tag", tag_associations.c.tag_key)
Index("ix_tag_associations_state", tag_associations.c.state)

# Path specifications: a list of {sourcePath, includePattern, excludePattern}.
virtual_folders = Table(
    "virtual_folders",
    metadata,
    _key(),
    *_named(),
    Column("description", Text),
    Column("data_source_key", String(KEY), ForeignKey("data_sources.key"), nullable=False),
    Column("parent_key", String(KEY), ForeignKey("virtual_folders.key")),
    Column("path_specs", JSON, nullable=False),
    *_times(),
)

# Path specifications per data source key: {sourceKey: [{sourcePath, ...}]}.
datasets = Table(
    "datasets",
    metadata,
    _key(),
    *_named(),
    Column("description", Text),
    Column("path_specs", JSON, nullable=False),
    *_times(),
)

# The keyword index: one document per resource, its text by column (normalised: words separated
# by single spaces), maintained by store/search.py in the transaction of every write that changes
# it. SQLite indexes it in the FTS5 table ``search_fts`` (rowid = doc_id); PostgreSQL in the
# ``tsv`` column with a GIN index. Both are created by migrations.create_search_index. A refresh
# writes a resource's document anew, under an id never given before (AUTOINCREMENT on SQLite,
# which would otherwise give a deleted highest id again; a sequence on PostgreSQL): a document's
# rows never change, so processes keep them by id (store/document_rows.py).
search_documents = Table(
    "search_documents",
    metadata,
    Column("doc_id", Integer, primary_key=True, autoincrement=True),
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False, unique=True,
    ),
    Column("name", Text, nullable=False),
    Column("path", Text, nullable=False),
    Column("tags", Text, nullable=False),
    Column("fields", Text, nullable=False),
    Column("descriptions", Text, nullable=False),
    Column("custom", Text, nullable=False),
    sqlite_autoincrement=True,
)

# Categories of the facets that a resource row does not hold itself (tags and custom property
# values: facet "cp:<property key>"), one row per category.
search_facet_values = Table(
    "search_facet_values",
    metadata,
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("facet", String(64), primary_key=True),
    Column("category", Text, primary_key=True),
)
Index("ix_search_facet_values_category", search_facet_values.c.facet,
      search_facet_values.c.category)


def _cell_coordinates() -> list[Column[Any]]:
    """What a facet cell is keyed by: the resource's facet columns, a size range instead of the
    size and the day (epoch day, UTC) of its last change instead of the time."""
    return [
        Column("data_source_key", String(KEY), nullable=False),
        Column("resource_type", String(64), nullable=False),
        Column("file_format", String(32)),
        Column("owner", String(MAX_NAME_LENGTH)),
        Column("sensitivity", String(32)),
        Column("size_range", String(16), nullable=False),
        Column("field_types", Integer, nullable=False),
        Column("change_day", Integer),
    ]


# Facet counts kept ahead of the searches (store/facet_cells.py): resources counted per
# combination of the cell coordinates (facet = '') and, per derived category (facet and
# category of search_facet_values), its holders counted likewise. Rows are signed deltas
# appended by every index refresh (so concurrent writers never update one row) and folded
# together now and then; a cell's count is the sum of its rows.
search_cells = Table(
    "search_cells",
    metadata,
    Column("cell_id", Integer, primary_key=True, autoincrement=True),
    Column("facet", String(64), nullable=False),
    Column("category", Text, nullable=False),
    *_cell_coordinates(),
    Column("n", Integer, nullable=False),
)
# The coordinates and derived categories each resource is counted under in search_cells, so a
# refresh can take back exactly what it counted before (the resource row has changed by then).
# No foreign key: the entry must outlive its resource until the refresh that takes it back.
search_cell_members = Table(
    "search_cell_members",
    metadata,
    Column("resource_key", String(KEY), primary_key=True),
    *_cell_coordinates(),
    Column("derived", Text, nullable=False),
)

# Each search document's resource counted as search_cell_members counts it, and its name, keyed
# by the document (doc_id, the FTS rowid): a keyword search counts and orders its matches from
# these narrow rows, found from the full-text matches by their integer key, instead of probing
# the wide resource rows by text key and the facet values per match (store/facet_cells.py).
# ``tail`` holds the member's coordinates but the day, and its derived categories, as one JSON
# text: what the search reads per match (built per match, it took PostgreSQL 2 us a row).
search_document_facets = Table(
    "search_document_facets",
    metadata,
    Column("doc_id", Integer, ForeignKey("search_documents.doc_id", ondelete="CASCADE"),
           primary_key=True, autoincrement=False),
    Column("resource_key", String(KEY), nullable=False),
    Column("name", Text, nullable=False),
    Column("change_day", Integer),
    Column("tail", Text, nullable=False),
)

# A search's criteria and every matched key in order ([[key, score], ...]), for its session.
stored_searches = Table(
    "stored_searches",
    metadata,
    _key(),
    Column(
        "token_hash", String(64), ForeignKey("sessions.token_hash", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("criteria", JSON, nullable=False),
    Column("summary", JSON, nullable=False),
    Column("ordered", JSON, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    # 'ready', or 'ordering' while a facet-only search's matches are ordered after its answer
    # (``ordered`` then holds the first page, ``matched`` the count): store/search.py.
    Column("state", String(16), nullable=False, default="ready", server_default="ready"),
    Column("matched", BigInteger),
)
Index("ix_stored_searches_session", stored_searches.c.token_hash, stored_searches.c.created_ms)
# A session's results by state (a search defers those still being ordered) without reading a
# result: on SQLite the state column comes after the matches, which take dozens of overflow pages.
stored_searches_by_state = Index("ix_stored_searches_state", stored_searches.c.token_hash,
                                 stored_searches.c.state)

# Lineage between two resources: FACTUAL from a view's SQL, INFERRED from content containment.
# ``field_lineage`` is [{"downstreamField": name, "upstreamFields": [name, ...]}]; ``evidence``
# says why the edge exists (parser, statements, containment figures). One edge per
# (upstream, downstream, type); discovery replaces its own edges wholesale.
lineage_edges = Table(
    "lineage_edges",
    metadata,
    _key(),
    Column(
        "upstream_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False,
    ),
    Column(
        "downstream_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("lineage_type", String(16), nullable=False),
    Column("field_lineage", JSON, nullable=False),
    Column("evidence", JSON, nullable=False),
    Column("score", Float),
    *_times(),
    UniqueConstraint("upstream_key", "downstream_key", "lineage_type", name="uq_lineage_edge"),
)
Index("ix_lineage_edges_up", lineage_edges.c.upstream_key)
Index("ix_lineage_edges_down", lineage_edges.c.downstream_key)

# How lineage discovery fared on one resource (a view whose SQL did not parse keeps its reason):
# state PARSED | PARTIAL (table level only) | UNPARSED | NONE.
lineage_status = Table(
    "lineage_status",
    metadata,
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("state", String(16), nullable=False),
    Column("reason", Text),
    Column("computed_ms", BigInteger, nullable=False),
)

# A join between fields of two resources, stored once per pair and shown from both sides as the
# resources' joinConditions. ``signature`` is "<left cols>|<right cols>" (JSON lists cannot take
# part in a unique constraint); ``origin`` DECLARED (a foreign key) | DISCOVERED (sketches);
# ``cardinality`` reads left to right: 1:1, 1:N, N:1, N:M.
join_conditions = Table(
    "join_conditions",
    metadata,
    _key(),
    Column(
        "left_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False,
    ),
    Column(
        "right_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("left_cols", JSON, nullable=False),
    Column("right_cols", JSON, nullable=False),
    Column("signature", Text, nullable=False),
    Column("origin", String(16), nullable=False),
    Column("cardinality", String(8), nullable=False),
    Column("left_in_right", Float),
    Column("right_in_left", Float),
    Column("score", Float, nullable=False),
    Column("stats", JSON, nullable=False),
    *_times(),
    UniqueConstraint("left_key", "right_key", "signature", name="uq_join_condition"),
)
Index("ix_join_conditions_left", join_conditions.c.left_key)
Index("ix_join_conditions_right", join_conditions.c.right_key)

# A user's favorite resources (the resource's ``favorite`` flag is the caller's).
favorites = Table(
    "favorites",
    metadata,
    Column("user_key", String(KEY), ForeignKey("users.key", ondelete="CASCADE"), primary_key=True),
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("created_ms", BigInteger, nullable=False),
)

# Reviews: one per user and resource; averageRating/ratingCount are computed from them.
reviews = Table(
    "reviews",
    metadata,
    _key(),
    Column(
        "resource_key", String(KEY), ForeignKey("data_resources.key", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("user_key", String(KEY), ForeignKey("users.key", ondelete="CASCADE"), nullable=False),
    Column("user_name", String(MAX_NAME_LENGTH), nullable=False),
    Column("rating", Integer, nullable=False),
    Column("title", Text),
    Column("text", Text),
    *_times(),
    UniqueConstraint("resource_key", "user_key", name="uq_review_per_user"),
)
Index("ix_reviews_resource", reviews.c.resource_key)

# Configuration properties changed through /config (the rest keep their settings' values).
config_values = Table(
    "config_values",
    metadata,
    Column("name", String(128), primary_key=True),
    Column("value", JSON),
    Column("changed_by", String(MAX_NAME_LENGTH)),
    Column("changed_ms", BigInteger, nullable=False),
)
