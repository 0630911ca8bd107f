"""The raw JSON layer (``cat.api``): one method per REST endpoint, the service's JSON as is.

:class:`~catalog_nb.client.api.core.CatalogApi` (:mod:`.core`: generic calls, users, roles, audit
trail, version and configuration) gathers the endpoint families: :mod:`.resources` (data
sources, jobs, data resources, custom properties, virtual folders, data sets), :mod:`.tags`
(tag domains, tags, tag associations), :mod:`.search`, :mod:`.relations` (lineage, join
conditions, table overlap) and :mod:`.annotations` (favorites, reviews).
"""
