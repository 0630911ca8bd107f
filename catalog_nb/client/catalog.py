"""The :class:`Catalog` facade analysts hold, and :func:`connect` that makes one.

Example::

    import catalog_nb

    with catalog_nb.connect("http://127.0.0.1:8765", "admin", password) as cat:
        users = cat.users()
        cat.audit_events(action="LOGIN", outcome="FAILURE")
        cat.profile("demo_files")
        cat.resources("demo_files", type="file")
        cat.fields("demo_files", "crm/customers.csv")
        cat.tags("Sensitive")
        cat.associations("demo_files", state="SUGGESTED")
        cat.review_suggestions(min_weight=0.9)
        cat.search("customers", facets={"fileFormat": ["csv"]}).frame
        cat.lineage(("demo_sql", "sales.top_customers"), upstream=3)   # networkx DiGraph
        cat.impact(("demo_sql", "sales.customers"))
        cat.join_paths(("demo_sql", "sales.products"), ("demo_sql", "sales.customers"))
        cat.tag_coverage("demo_files")

Frame methods return pandas DataFrames with declared columns and nullable dtypes; each has a raw
form (``as_frame=False`` or the :attr:`Catalog.api` layer) that returns the service's JSON.
"""

from __future__ import annotations

import logging
from typing import Any

from urllib3.util.retry import Retry

from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.audit_trail import AuditMixin
from catalog_nb.client.credentials import resolve
from catalog_nb.client.errors import CatalogError
from catalog_nb.client.favorites import FavoritesMixin
from catalog_nb.client.http import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    HttpSession,
    Timeout,
)
from catalog_nb.client.jobs import JobsMixin
from catalog_nb.client.relations.lineage import LineageMixin
from catalog_nb.client.resources.folders import FoldersMixin
from catalog_nb.client.resources.properties import CustomPropertiesMixin
from catalog_nb.client.resources.resources import ResourcesMixin
from catalog_nb.client.resources.sources import SourcesMixin
from catalog_nb.client.reviews import ReviewsMixin
from catalog_nb.client.roles import RolesMixin
from catalog_nb.client.search import SearchMixin
from catalog_nb.client.service_config import ServiceConfigMixin
from catalog_nb.client.snapshots import SnapshotMixin
from catalog_nb.client.tags.associations import AssociationsMixin
from catalog_nb.client.tags.bulk import BulkMixin
from catalog_nb.client.tags.coverage import CoverageMixin
from catalog_nb.client.tags.tags import TagsMixin
from catalog_nb.client.users import UsersMixin

__all__ = ["Catalog", "connect"]

log = logging.getLogger(__name__)


class Catalog(
    UsersMixin,
    RolesMixin,
    AuditMixin,
    SourcesMixin,
    JobsMixin,
    ResourcesMixin,
    CustomPropertiesMixin,
    FoldersMixin,
    TagsMixin,
    AssociationsMixin,
    BulkMixin,
    SearchMixin,
    LineageMixin,
    CoverageMixin,
    FavoritesMixin,
    ReviewsMixin,
    ServiceConfigMixin,
    SnapshotMixin,
):
    """A logged-in connection to one catalog service. Make one with :func:`connect`.

    Families: users and roles (:mod:`~catalog_nb.client.users`, :mod:`~catalog_nb.client.roles`),
    the audit trail (:mod:`~catalog_nb.client.audit_trail`), data sources
    (:mod:`~catalog_nb.client.resources.sources`), browse/profile jobs
    (:mod:`~catalog_nb.client.jobs`), data resources and their fields
    (:mod:`~catalog_nb.client.resources.resources`), custom property definitions
    (:mod:`~catalog_nb.client.resources.properties`), virtual folders and data sets
    (:mod:`~catalog_nb.client.resources.folders`), tag domains and tags
    (:mod:`~catalog_nb.client.tags.tags`), tag associations with ``tag``/``untag``
    (:mod:`~catalog_nb.client.tags.associations`) and bulk tagging from DataFrames
    (:mod:`~catalog_nb.client.tags.bulk`), faceted search (:mod:`~catalog_nb.client.search`),
    lineage, impact, join graphs and paths and table overlap as networkx graphs and frames
    (:mod:`~catalog_nb.client.relations.lineage`), and tag coverage with the tag graph
    (:mod:`~catalog_nb.client.tags.coverage`), favorites (:mod:`~catalog_nb.client.favorites`),
    reviews (:mod:`~catalog_nb.client.reviews`), the service configuration
    (:mod:`~catalog_nb.client.service_config`) and snapshots
    (:mod:`~catalog_nb.client.snapshots`); draw the graphs with
    :mod:`catalog_nb.notebook.drawing`. Each family is a mixin built on
    :class:`~catalog_nb.client.part.CatalogPart`, so every method stays one flat call on the
    catalog (``cat.tags()``, ``cat.tag(...)``).

    Attributes:
        api: the raw layer (:class:`~catalog_nb.client.api.core.CatalogApi`), one method per
            endpoint, returning JSON.
        progress: whether long reads show a progress bar.

    Use it as a context manager to log out and close at the end::

        with connect() as cat:
            cat.roles()
    """

    def __init__(self, http: HttpSession, *, progress: bool = True) -> None:
        self.http = http
        self.api = CatalogApi(http)
        self.progress = progress

    @property
    def url(self) -> str:
        """The service root, e.g. ``http://127.0.0.1:8765``."""
        return self.http.url

    @property
    def username(self) -> str | None:
        """The user this catalog logs in as."""
        return self.http.username

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self.http.closed

    def __repr__(self) -> str:
        who = f" as {self.username}" if self.username else ""
        state = " (closed)" if self.closed else ""
        return f"<Catalog {self.url}{who}{state}>"

    def version(self) -> dict[str, Any]:
        """The service's ``{name, version, apiVersion, build}``."""
        answer: dict[str, Any] = self.api.version()
        return answer

    def login(self) -> dict[str, Any]:
        """Log in again (rarely needed: an expired session is renewed automatically)."""
        answer: dict[str, Any] = self.http.login()
        return answer

    def logout(self) -> None:
        """End the session on the service. A later call logs in again transparently."""
        self.http.logout()

    def close(self) -> None:
        """Log out (best effort) and close the connections. Safe to call twice."""
        if self.http.closed:
            return
        try:
            self.http.logout()
        except CatalogError as exc:  # the session may be gone already; closing must not fail
            log.debug("logout while closing %r failed: %s", self, exc)
        finally:
            self.http.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def connect(
    url: str | None = None,
    username: str | None = None,
    password: str | None = None,
    *,
    timeout: Timeout = DEFAULT_TIMEOUT,
    retries: int | Retry = DEFAULT_RETRIES,
    backoff_factor: float = DEFAULT_BACKOFF,
    verify: bool | str = True,
    progress: bool = True,
) -> Catalog:
    """Log in to a catalog service and return a :class:`Catalog`.

    Missing values come from ``CATALOG_URL``, ``CATALOG_USER``, ``CATALOG_PASSWORD`` and then
    the netrc file (``$NETRC`` or ``~/.netrc``, by the URL's host); see
    :mod:`catalog_nb.client.credentials`. It logs in at once, so wrong credentials fail here.

    Args:
        url: service root, e.g. ``http://127.0.0.1:8765`` (a trailing ``/api/v2`` is fine).
        username, password: credentials.
        timeout: seconds, one number or ``(connect, read)``; default ``(5, 60)``.
        retries: retries per request (or a ``urllib3`` ``Retry``); ``0`` disables them.
        backoff_factor: exponential backoff between retries.
        verify: TLS verification: ``True``, ``False`` or a CA bundle path.
        progress: show progress bars on long reads.

    Raises:
        ConfigurationError: no URL or credentials could be found, or the URL is not http(s).
        AuthenticationError: the service refused the credentials.
        CatalogConnectionError: the service could not be reached.

    Example::

        cat = connect("http://127.0.0.1:8765", "admin", "secret-password")
        cat.users()
    """
    settings = resolve(url, username, password)
    http = HttpSession(
        settings.url,
        username=settings.username,
        password=settings.password,
        timeout=timeout,
        retries=retries,
        backoff_factor=backoff_factor,
        verify=verify,
    )
    try:
        http.login()
    except BaseException:
        http.close()
        raise
    return Catalog(http, progress=progress)
