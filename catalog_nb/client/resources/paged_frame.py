"""The frame of :meth:`Catalog.resources` gathered a page at a time (:class:`PagedFrame`), as
the pages of a metadata read are decoded; the frame is the one
:func:`~catalog_nb.client.resources.frames.resources_frame` builds from all the records at once.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from catalog_nb.client.errors import CatalogError
from catalog_nb.client.frames import CatalogFrame, Column, plain, to_frame
from catalog_nb.client.resources.arrow_frame import ArrowRows, number_series, resources_frame_of
from catalog_nb.client.resources.frames import base_columns, custom_columns, frame_records

__all__ = ["PagedFrame"]


@dataclasses.dataclass(frozen=True)
class _Gathered(Column):
    """A column whose values were taken out of the records page by page (:class:`PagedFrame`)."""

    values: list[Any] = dataclasses.field(default_factory=list)

    def extract_all(
        self, records: Sequence[Mapping[str, Any]], *, dicts: bool = False
    ) -> list[Any]:
        return self.values[: len(records)]


def _arrow_strings() -> Any:
    """pyarrow when the frames' ``string`` columns are stored by it (pandas' default where it is
    installed), else None."""
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return pyarrow if pd.StringDtype().storage == "pyarrow" else None


_PLAIN_TEXT = frozenset({str, type(None)})


def _arrow_type(name: str) -> Callable[[], Any]:
    """The pyarrow type factory ``name`` (pyarrow is imported only where it is there)."""
    def build() -> Any:
        import pyarrow

        return getattr(pyarrow, name)()

    return build


#: The Arrow type a number column is gathered as, by kind (times as epoch milliseconds).
_ARROW_NUMBERS: dict[str, Callable[[], Any]] = {
    "int": _arrow_type("int64"), "float": _arrow_type("float64"), "bool": _arrow_type("bool_"),
    "time": _arrow_type("int64"),
}


class PagedFrame:
    """The frame of :meth:`Catalog.resources` gathered a page at a time.

    Called on each page's records as it is decoded (``read_pages``' ``keep``), it takes each
    column's values out of them while the next page is still on its way, and turns the text and
    number columns into Arrow arrays (what a ``string`` column holds; a masked array of numbers
    is built from them in one step at the end, several times faster than pandas builds one from
    a list) there and then; once the last page is in, only the other typed columns are left to
    build, each in one step, and the ``cp_`` columns (the kinds of their values are known only
    from every record). Taking 100,000 records apart at the end took as long as a third of the
    transfer; building every typed pandas column page by page took twice as long as building it
    once. The frame is the one :func:`resources_frame` builds.
    """

    def __init__(self, *, fields: bool = False, tags: bool = False) -> None:
        self.fields, self.tags = fields, tags
        self.columns = base_columns(fields=fields, tags=tags)
        self.arrow = _arrow_strings()
        self.text = {c.name for c in self.columns if c.kind == "string"} if self.arrow else set()
        self.values: dict[str, list[Any]] = {c.name: [] for c in self.columns}
        self.count = 0
        #: The layout of the pages read ("arrow" or "json"), and the Arrow pages (the frame is
        #: built from those when the pages were Arrow).
        self.layout: str | None = None
        self.tables: list[Any] = []
        #: The records with custom values: the only ones that can name a ``cp_`` column.
        self.customised: list[Mapping[str, Any]] = []
        #: The columns read straight off one key of the record, and a getter of those keys.
        self.plain = {c.name: c.source or c.name for c in self.columns if type(c) is Column
                      and (c.source is None or (isinstance(c.source, str) and "." not in c.source))}
        self.getter = operator.itemgetter(*self.plain.values())
        #: Number columns gathered as Arrow arrays, a page at a time, while every page's values
        #: are of the types the column takes as they are (:func:`frames.plain`); the first page
        #: with another type sends the column back to Python values, converted as ever.
        self.numbers = {c.name for c in self.columns if c.kind in _ARROW_NUMBERS} \
            if self.arrow else set()

    def _plain_values(self, kept: list[dict[str, Any]], dicts: bool) -> dict[str, Sequence[Any]]:
        """The values of the columns of :attr:`plain`, by column, taken out of the records in
        one pass (less than half the time of a pass per column); {} when some record lacks one of
        their keys (then each column is read with ``get``)."""
        if not dicts or not kept or len(self.plain) < 2:
            return {}
        try:
            by_column = list(zip(*map(self.getter, kept), strict=True))
        except KeyError:
            return {}
        return dict(zip(self.plain, by_column, strict=True))

    def __call__(self, records: Sequence[Any]) -> Sequence[Any]:
        layout = "arrow" if isinstance(records, ArrowRows) else "json"
        if self.layout not in (None, layout):
            raise CatalogError("The catalog answered some pages of one read as Arrow and "
                               "others as JSON")
        self.layout = layout
        if isinstance(records, ArrowRows):
            # An Arrow page (client/resources/arrow_frame.py) is kept whole, its rows stood for by
            # their positions in the frame.
            self.tables.append(records.table)
            self.count += len(records)
            return range(self.count - len(records), self.count)
        kept = frame_records(records)
        dicts = all(type(r) is dict for r in kept)
        plain = self._plain_values(kept, dicts)
        for column in self.columns:
            values = plain.get(column.name)
            if values is None:
                values = column.extract_all(kept, dicts=dicts)
            if column.name in self.text:
                if not _PLAIN_TEXT.issuperset(map(type, values)):
                    # As frames.to_frame writes a value that is no text: its str().
                    values = [v if v is None or isinstance(v, str) else str(v) for v in values]
                self.values[column.name].append(self.arrow.array(values,
                                                                 self.arrow.large_string()))
            elif column.name in self.numbers:
                self._gather_number(column, values)
            else:
                self.values[column.name].extend(values)
        self.count += len(kept)
        self.customised += [r for r in kept if r.get("customProperties")]
        return kept

    def frame(
        self,
        records: Sequence[Mapping[str, Any]],
        definitions: Sequence[Mapping[str, Any]] | None = None,
    ) -> pd.DataFrame:
        """The whole frame; ``records`` are what the pages kept, cut to the ``limit`` read."""
        if self.layout == "arrow":
            return resources_frame_of(self.tables, len(records), definitions)
        arrays = self.text | self.numbers
        columns: list[Column] = [_Gathered(c.name, c.kind, None, self.values[c.name])
                                 for c in self.columns if c.name not in arrays]
        gathered = len(columns)
        if definitions is not None:
            # Cut by ``limit``: the records left out must not name a column.
            named = self.customised if len(records) == self.count else records
            columns.extend(custom_columns(definitions, named))
        built = to_frame(records, columns)
        if not arrays:
            return built
        index = pd.RangeIndex(len(records))
        ready = {
            name: pd.Series(pd.arrays.ArrowStringArray(self.arrow.chunked_array(
                self.values[name], self.arrow.large_string())[: len(records)]), index=index)
            for name in self.text
        }
        kinds = {c.name: c.kind for c in self.columns}
        for name in self.numbers:
            ready[name] = number_series(kinds[name], self.arrow.chunked_array(
                self.values[name], _ARROW_NUMBERS[kinds[name]]())[: len(records)], index)
        order = [c.name for c in self.columns] + [c.name for c in columns[gathered:]]
        return CatalogFrame({name: ready[name] if name in ready else built[name]
                             for name in order}, columns=order, index=index)

    def _gather_number(self, column: Column, values: Sequence[Any]) -> None:
        """A page's values of a number column as an Arrow array; as Python values (and those of
        the pages before) once a value of another type turns up."""
        gathered = self.values[column.name]
        if plain(column.kind, values):
            try:
                # from_pandas: a NaN is missing, as a Float64 column built from a list has it.
                gathered.append(self.arrow.array(values, _ARROW_NUMBERS[column.kind](),
                                                 from_pandas=True))
                return
            except (self.arrow.ArrowInvalid, OverflowError):
                pass  # a number too wide for 64 bits: converted (and refused) as ever
        self.numbers.discard(column.name)
        self.values[column.name] = [v for array in gathered for v in array.to_pylist()]
        self.values[column.name].extend(values)
