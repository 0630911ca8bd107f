"""Keyword search and facets: the index interface and its two engines (``index``,
``sqlite_fts``, ``postgres_fts``), phrase parsing (``query``) and facet definitions
(``facets``). The SQL that reads and writes the search tables is in ``store.search``."""
