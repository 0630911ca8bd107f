"""The demo: an embedded catalog service for notebooks, tests and the README's first command."""

from catalog_nb.demo.embedded import EmbeddedServer

__all__ = ["EmbeddedServer"]
