"""What a caller may see: the rules, pure (no store, no SQL).

Visibility follows DESIGN.md: Administrators and roles with ``metadataAccessOption = ALL`` see
every data source; other roles see the sources in their ``dataSourceKeys``, plus the resources
under their virtual folders and data sets. Anything a caller may not see answers 404, not 403.
A grant of a virtual folder covers the resources its own path specifications match (not those
of its child folders). ``store.visible.visibility`` resolves this once per request into a
:class:`Visibility`; ``store.visible.visible_condition`` turns that into one SQL condition for
many resources at once, and the methods of :class:`Visibility` answer for single objects.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from catalog_nb.contract import AccessLevel, MetadataAccessOption

if TYPE_CHECKING:
    from catalog_nb.server.store.roles import RoleRecord


def sees_every_source(roles: Iterable[RoleRecord]) -> bool:
    """Whether these roles lift the data source restriction altogether."""
    return any(
        r.access_level == AccessLevel.ADMINISTRATOR.value
        or r.metadata_access_option == MetadataAccessOption.ALL.value
        for r in roles
    )


def sees_source(roles: Sequence[RoleRecord], source_key: str) -> bool:
    """Whether these roles see a whole data source."""
    return sees_every_source(roles) or any(source_key in r.granted("DATA_SOURCE") for r in roles)


@dataclass(frozen=True)
class PathSpec:
    """A compiled path specification (``sourcePath``, ``includePattern``, ``excludePattern``).

    ``base`` is the folder prefix without leading or trailing "/" (empty: the whole source).
    Compiling once and matching many paths is what lets a page of 1,000 resources be checked
    against every folder of its sources without re-reading the patterns each time.
    """

    base: str
    include: str | None
    exclude: str | None

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> PathSpec:
        """The compiled form of a stored or sent path specification."""
        return cls(
            str(spec.get("sourcePath") or "").strip("/"),
            str(spec["includePattern"]) if spec.get("includePattern") else None,
            str(spec["excludePattern"]) if spec.get("excludePattern") else None,
        )

    @property
    def has_patterns(self) -> bool:
        return bool(self.include or self.exclude)

    def under_base(self, path: str) -> bool:
        """Whether ``path`` is the base itself or lies below it (patterns not considered)."""
        clean = path.strip("/")
        return not self.base or clean == self.base or clean.startswith(self.base + "/")

    def matches(self, path: str) -> bool:
        """Whether a resource path falls under this specification (see :func:`path_matches`)."""
        if not self.under_base(path):
            return False
        clean = path.strip("/")
        below = clean[len(self.base):].lstrip("/")
        name = clean.rsplit("/", 1)[-1]
        if self.include and not _hit(self.include, below, name):
            return False
        return not (self.exclude and _hit(self.exclude, below, name))


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> Callable[[str], Any]:
    return re.compile(fnmatch.translate(pattern)).match


def _hit(pattern: str, below: str, name: str) -> bool:
    match = _glob(pattern)
    return match(below) is not None or match(name) is not None


def path_matches(spec: Mapping[str, Any], path: str) -> bool:
    """Whether a resource path falls under a path specification.

    ``sourcePath`` is a folder prefix (empty or "/" means the whole source; leading and trailing
    "/" are ignored on both sides, so ``/sales`` and ``sales`` name the same folder);
    ``includePattern`` and ``excludePattern`` are case-sensitive glob patterns matched against the
    path below it and against the resource's own name, so ``*.csv`` works at any depth.

    >>> path_matches({"sourcePath": "/sales", "includePattern": "*.csv"}, "/sales/2024/q1.csv")
    True
    >>> path_matches({"sourcePath": "sales", "excludePattern": "2024/*"}, "sales/2024/q1.csv")
    False
    """
    return PathSpec.of(spec).matches(path)


@dataclass(frozen=True)
class Visibility:
    """What one caller may see, resolved once per request and applied to many resources.

    ``sources`` are the data sources seen whole; ``specs`` maps every other source the caller
    reaches through a granted virtual folder or data set to the compiled path specifications
    of those grants. ``everything`` (Administrators, ``metadataAccessOption = ALL``) makes the
    rest irrelevant. The store turns this into one SQL condition (``store.visible``); the
    helpers below answer for single resources, folders and data sets.
    """

    everything: bool
    sources: frozenset[str] = frozenset()
    specs: Mapping[str, tuple[PathSpec, ...]] = field(default_factory=dict)
    folder_keys: frozenset[str] = frozenset()
    dataset_keys: frozenset[str] = frozenset()

    def sees_source(self, source_key: str) -> bool:
        """Whether the whole data source is visible."""
        return self.everything or source_key in self.sources

    def touches(self, source_key: str) -> bool:
        """Whether at least part of the data source is visible."""
        return self.sees_source(source_key) or source_key in self.specs

    def sees(self, source_key: str, path: str) -> bool:
        """Whether the resource at ``path`` of a source is visible."""
        if self.sees_source(source_key):
            return True
        return any(spec.matches(path) for spec in self.specs.get(source_key, ()))

    def sees_folder(self, folder: Mapping[str, Any]) -> bool:
        """A virtual folder is visible with its whole source, or when granted."""
        return self.sees_source(str(folder["data_source_key"])) or folder["key"] in self.folder_keys

    def sees_dataset(self, dataset: Mapping[str, Any]) -> bool:
        """A data set is visible when granted, or when one of its sources is seen whole."""
        if self.everything or dataset["key"] in self.dataset_keys:
            return True
        return any(self.sees_source(k) for k in (dataset.get("path_specs") or {}))


def granted_keys(roles: Iterable[RoleRecord], kind: str) -> frozenset[str]:
    """The keys of one grant kind (``DATA_SOURCE``, ``VIRTUAL_FOLDER``, ...) these roles hold."""
    return frozenset(k for r in roles for k in r.granted(kind))


def resolve(
    roles: Sequence[RoleRecord],
    folders: Iterable[Mapping[str, Any]],
    datasets: Iterable[Mapping[str, Any]],
) -> Visibility:
    """What these roles see, given the stored rows of (at least) the folders and data sets they
    are granted; rows of other folders and data sets are ignored."""
    if sees_every_source(roles):
        return Visibility(everything=True)
    whole = granted_keys(roles, "DATA_SOURCE")
    folder_keys = granted_keys(roles, "VIRTUAL_FOLDER")
    dataset_keys = granted_keys(roles, "DATASET")
    specs: dict[str, list[PathSpec]] = {}
    for folder in folders:
        source = str(folder["data_source_key"])
        if folder["key"] in folder_keys and source not in whole:
            specs.setdefault(source, []).extend(
                PathSpec.of(s) for s in folder["path_specs"] or []
            )
    for dataset in datasets:
        if dataset["key"] not in dataset_keys:
            continue
        for source, listed in (dataset["path_specs"] or {}).items():
            if source not in whole:
                specs.setdefault(source, []).extend(PathSpec.of(s) for s in listed or [])
    return Visibility(
        everything=False,
        sources=whole,
        specs={k: tuple(dict.fromkeys(v)) for k, v in specs.items() if v},
        folder_keys=folder_keys,
        dataset_keys=dataset_keys,
    )
