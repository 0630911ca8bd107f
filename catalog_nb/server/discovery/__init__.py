"""Discovery: what the catalog learns from profiled data on its own.

Tag discovery (this package today) suggests field-level tag associations:

* :mod:`.builtin` - the built-in domain ``Sensitive`` and its tags, seeded on first start;
* :mod:`.checks` - the extra checks of built-in tags (Luhn, mod-97, IP syntax, SSN ranges,
  plausible dates of birth);
* :mod:`.regex_rules` - time-bounded pattern matching and the share of matching values;
* :mod:`.learning` - resemblance of a field to the fields people tagged;
* :mod:`.runner` - a discovery run over resources, as DISCOVER jobs and PROFILE jobs run it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog_nb.server.discovery.runner import DiscoveryReport, discover

__all__ = ["DiscoveryReport", "discover"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the service imports .builtin at start-up (the built-in tags), and
    # the runner would bring numpy and the profiling libraries with it (PEP 562).
    if name in __all__:
        from catalog_nb.server.discovery import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
