"""The facet column of the search panel: one collapsible :class:`FacetGroup` per facet
(a title that folds it, a filter box when it has many categories, checkboxes with counts), and
the chips of the active filters with their ✕ and "clear all".

>>> option_label("csv", 12)
'csv (12)'
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping

import ipywidgets as W
import pandas as pd

from catalog_nb.notebook.facet_search.views import CheckList

__all__ = ["FacetGroup", "chip_buttons", "facet_options", "option_label"]


def option_label(category: str, count: int) -> str:
    """The label of one facet option.

    >>> option_label("csv", 12)
    'csv (12)'
    """
    return f"{category} ({count:,})"


def facet_options(
    facets: pd.DataFrame | None, name: str, chosen: list[str], needle: str, top_n: int
) -> pd.DataFrame:
    """The categories of facet ``name`` to list: those matching ``needle`` (case-insensitive),
    the ``top_n`` largest, plus every chosen one (columns category, count, selected)."""
    if facets is None:
        return pd.DataFrame({"category": [], "count": [], "selected": []})
    rows = facets.loc[facets["facet"] == name, ["category", "count", "selected"]]
    rows = rows.assign(selected=rows["category"].isin(set(chosen)))
    needle = needle.strip().casefold()
    if needle:
        rows = rows[rows["category"].str.casefold().str.contains(needle, regex=False)]
    top = rows.head(top_n)
    kept = rows[rows["selected"] & ~rows["category"].isin(top["category"])]
    return pd.concat([top, kept], ignore_index=True)


class FacetGroup:
    """The widgets of one facet: ``title`` (HTML), ``toggle`` (folds the group), ``filter``
    (narrows long category lists), ``selector`` (a :class:`CheckList`) and ``box`` (all of
    them; hidden while the facet has nothing to offer)."""

    def __init__(self, name: str, display_name: str, *, collapsed: bool) -> None:
        self.name = name
        self.display_name = display_name
        self.title = W.HTML(value=f"<b>{html.escape(display_name)}</b>")
        self.toggle = W.ToggleButton(
            value=not collapsed, description=display_name, icon="caret-down",
            tooltip="show or hide this facet", layout=W.Layout(width="auto"),
        )
        self.toggle.add_class("cnb-facet-toggle")
        self.filter = W.Text(placeholder="filter categories", continuous_update=True,
                             layout=W.Layout(width="95%"))
        self.selector = CheckList()
        self.body = W.VBox([self.title, self.filter, self.selector])
        self.box = W.VBox([self.toggle, self.body], layout=W.Layout(margin="0 0 4px 0"))
        self.box.add_class("cnb-facet")
        # A class per facet, so a page (or a browser test) can find one facet's group.
        self.box.add_class("cnb-facet-" + re.sub(r"[^A-Za-z0-9_-]", "-", name))
        self.toggle.observe(lambda _: self.show_body(), names="value")
        self.show_body()

    def show_body(self) -> None:
        """Fold or unfold the group as its toggle says."""
        self.body.layout.display = "" if self.toggle.value else "none"
        self.toggle.icon = "caret-down" if self.toggle.value else "caret-right"

    def fill(self, shown: pd.DataFrame, total: int, chosen: list[str], top_n: int) -> None:
        """Show the categories ``shown`` (of ``total``) with ``chosen`` ticked."""
        options = [
            (option_label(str(category), int(count)), str(category))
            for category, count in zip(shown["category"], shown["count"], strict=True)
        ]
        values = {value for _, value in options}
        options.extend((option_label(c, 0), c) for c in chosen if c not in values)
        self.selector.options = options
        self.selector.value = tuple(chosen)
        label = f"<b>{html.escape(self.display_name)}</b>"
        if total > len(shown):
            label += f" <small>({len(shown)} of {total:,}; filter to find more)</small>"
        self.title.value = label
        # The toggle names the facet already: the title shows only to say what is left out.
        self.title.layout.display = "" if total > len(shown) else "none"
        picked = f" ({len(chosen)})" if chosen else ""
        self.toggle.description = f"{self.display_name}{picked}"
        # The filter box only earns its space when the categories do not all fit.
        self.filter.layout.display = "" if total > top_n or self.filter.value else "none"
        self.box.layout.display = "" if total or chosen or self.filter.value else "none"


def chip_buttons(
    selections: Mapping[str, list[str]],
    names: Mapping[str, str],
    remove: Callable[[str, str], None],
    clear: Callable[[], None],
) -> list[W.Button]:
    """One ✕ chip per active filter (a click removes it), then "clear all" when any."""
    chips: list[W.Button] = []
    for facet, categories in selections.items():
        for category in categories:
            chip = W.Button(
                description=f"{names.get(facet, facet)}: {category} ✕",
                tooltip=f"remove the filter {facet} = {category}",
                layout=W.Layout(width="auto"),
            )
            chip.add_class("cnb-chip")
            chip.on_click(lambda _, f=facet, c=category: remove(f, c))
            chips.append(chip)
    if chips:
        everything = W.Button(description="clear all", button_style="warning",
                              layout=W.Layout(width="auto"))
        everything.on_click(lambda _: clear())
        chips.append(everything)
    return chips
