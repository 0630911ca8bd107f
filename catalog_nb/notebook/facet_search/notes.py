"""What the search panel writes beside its results: why nothing matched, and the tags of the
resource in the details pane."""

from __future__ import annotations

import html

from catalog_nb.client import Resource, SearchResult

__all__ = ["no_match_note", "tags_html"]


def no_match_note(result: SearchResult, advanced: bool) -> str:
    """Why a search found nothing, and what to try ("" when it found something)."""
    if result.total:
        return ""
    phrase = (result.text or "").strip()
    if phrase and "*" in phrase and not advanced:
        return (f"No resource matches {phrase!r}: BASIC search matches whole words and reads "
                "'*' as a separator. Switch to ADVANCED, where a trailing * makes a prefix "
                "(cust* finds customers).")
    if result.selections:
        return "No resource matches these words and filters: remove a filter (✕) or a word."
    return f"No resource matches {phrase!r}: try fewer or shorter words." if phrase else (
        "The catalog holds no resource you may see.")


def tags_html(resource: Resource) -> str:
    views = [v for v in resource.raw.get("tagAssociationViewList") or [] if isinstance(v, dict)]
    if not views:
        return "<p><b>Tags:</b> none</p>"
    items = "".join(
        f"<li>{html.escape(str(v.get('tagFullName') or v.get('tagName')))}"
        f"{' on ' + html.escape(str(v['field'])) if v.get('field') else ''}"
        f" <small>({html.escape(str(v.get('state')))})</small></li>"
        for v in views
    )
    return f"<p><b>Tags:</b></p><ul>{items}</ul>"
