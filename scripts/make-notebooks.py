#!/usr/bin/env python3
"""Write the notebooks of notebooks/ from the cells below: review and edit them here.

    .venv/bin/python scripts/make-notebooks.py          # (re)write notebooks/*.ipynb
    .venv/bin/python scripts/make-notebooks.py --check  # exit 1 when a notebook is stale

The notebooks are stored without outputs (CI executes every one with nbval; `make demo` leaves
an executed tour in .catalog-demo/reports). Each starts with ``cat = open_catalog()``, so it runs
unmodified against the embedded demo and against any server ``CATALOG_URL`` names
(``catalog_nb.notebook.session``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

Cell = tuple[str, str]


def md(text: str) -> Cell:
    return ("markdown", text.strip("\n"))


def code(text: str) -> Cell:
    return ("code", text.strip("\n"))


def header(text: str) -> Cell:
    """The first cell: the notebook's title and purpose, then how it finds its catalog."""
    return md(text.strip("\n") + "\n\n" + CONNECT_TEXT.strip("\n"))


CONNECT_TEXT = """
**Which catalog?** `open_catalog()` (from `catalog_nb.notebook.session`) decides:

- with `CATALOG_URL` set, it logs in to that server as `CATALOG_USER` / `CATALOG_PASSWORD`
  (or the `~/.netrc` entry of its host);
- otherwise it uses the embedded demo catalog of `CATALOG_DEMO_DIR` (default: the
  `.catalog-demo` folder `make demo` fills). It attaches to the demo server when one is serving
  that folder, and otherwise starts one for the lifetime of this kernel, building and profiling
  the demo lake first if needed (`CATALOG_DEMO_SCALE` sets its size).

Files this notebook writes go to `report_dir()`: `CATALOG_REPORT_DIR`, else `reports/` in the
demo folder.
"""

#: The setup cell; ``{imports}`` becomes what the notebook's other cells use (see ``build``).
SETUP = code("""
%matplotlib inline
{imports}import pandas as pd

from catalog_nb.notebook.session import {session}

pd.set_option("display.max_columns", 30)
pd.set_option("display.max_colwidth", 60)
cat = open_catalog(progress=False)
cat
""")


def setup_cell(cells: list[Cell]) -> Cell:
    """SETUP importing only what the other cells use (an unused import is a lint error)."""
    body = "\n".join(text for kind, text in cells if kind == "code" and (kind, text) != SETUP)
    session = ["open_catalog"] + [name for name in ("pick", "report_dir") if f"{name}(" in body]
    imports = "import matplotlib.pyplot as plt\n" if "plt." in body else ""
    return ("code", SETUP[1].format(imports=imports, session=", ".join(session)))


TOUR: list[Cell] = [
    header("""
# A tour of catalog_nb

A data catalog for Jupyter: the catalog service knows the data sources, the resources in them
(files, folders of files, tables, views), their fields with statistics, their tags, how they
derive from and join with each other; this notebook asks it questions and gets DataFrames,
plots and widgets back. It ends by writing an HTML report and an Excel workbook of the catalog.
"""),
    SETUP,
    code("cat.version()"),
    md("""
## Data sources and resources

A data source is a folder of files or an SQL database. The service browses and profiles it with
its own jobs: what it finds becomes data resources, each with its fields and statistics.
"""),
    code("cat.sources()[['name', 'source_type', 'uri', 'resource_count', 'last_job_state']]"),
    code("""
resources = cat.resources()
resources[['source', 'path', 'type', 'format', 'rows', 'field_count', 'state']]
"""),
    code("""
counts = resources.groupby(['source', 'type']).size().unstack(fill_value=0)
ax = counts.plot.barh(stacked=True, figsize=(7, 2.5), title='Data resources by source and type')
ax.set_xlabel('resources');
"""),
    md("""
## One resource, its fields and their statistics

`cat.resource()` shows a summary and the fields table; `.fields` is the same as a DataFrame.
"""),
    code("""
customers = cat.resource(pick(resources, 'crm/customers.csv')['key'])
customers
"""),
    code("""
fields = customers.fields
ax = fields.set_index('name')['density'].sort_values().plot.barh(
    figsize=(6, 3.5), xlim=(0, 1), title=f'Share of non-null values in {customers["name"]}')
ax.set_xlabel('density');
"""),
    md("""
## Search, and the facet search widget

Keywords match names, paths, descriptions, fields and tags; facets narrow the matches. The
widget puts both in one panel (type, tick facets, page, pick a row for its fields).
"""),
    code("cat.search('customer')"),
    code("""
from catalog_nb.notebook import FacetSearch

panel = FacetSearch(cat, 'customer', top_n=8, page_size=10)
panel
"""),
    md("""
## Sensitive fields

Profiling runs tag discovery: every field that looks like an e-mail address, a phone number, a
card number... gets a *suggested* tag with a weight; people accept or reject suggestions.
`review_suggestions()` plans accepting the pending ones (nothing changes until
`dry_run=False`).
"""),
    code("""
associations = cat.associations()
by_tag = associations.pivot_table(index='tag', columns='state', values='key', aggfunc='count',
                                  fill_value=0)
by_tag.plot.barh(stacked=True, figsize=(6, 3.5), title='Tagged fields per tag and state');
"""),
    code("cat.review_suggestions(min_weight=0.9).head(10)"),
    md("""
## Lineage and joins

Views read tables (FACTUAL lineage, from their SQL); files copied or filtered from other files
are found by their content (INFERRED lineage). A field that is a key of its resource and holds
another field's values is a join candidate, scored so that 0.9 means about nine in ten such
candidates are true. The join picture shows the candidates scoring 0.85 or more (`min_score=`
changes that), the same table as a file and as an SQL table as one node (copies are lineage, not
joins), and each edge's columns from the referring side to the key.
"""),
    code("""
from catalog_nb.notebook.drawing import draw_join_graph, draw_lineage, draw_tag_coverage

# A view of the database when this user sees one, else any resource.
views = resources[resources['type'] == 'view']
view = pick(views if len(views) else resources, 'sales.customer_revenue')
lineage = cat.lineage(view['key'], upstream=3, downstream=1)
draw_lineage(lineage);
"""),
    code("""
joins = cat.join_graph()  # score >= 0.85, copies merged
fig, ax = plt.subplots(figsize=(11, 7))
draw_join_graph(joins, ax=ax);
"""),
    code("""
cat.join_conditions(min_score=0.85)[
    ['left_path', 'left_cols', 'right_path', 'right_cols', 'cardinality', 'score']].head(10)
"""),
    md("""
## Tag coverage and audits

How much of each source is tagged (here counting discovery's suggestions too, as nobody has
reviewed them yet), and the ad-hoc audits: who can see sensitive data, what is undocumented,
what was never reviewed...
"""),
    code("""
coverage = cat.tag_coverage(states=['ACCEPTED', 'SUGGESTED'])
draw_tag_coverage(coverage, level='source');
"""),
    code("""
from catalog_nb.notebook import audit

findings = audit.run_all(cat)
print(findings.groupby(['audit', 'severity']).size().unstack(fill_value=0))
findings[['audit', 'severity', 'object_type', 'object', 'detail']].head(15)
"""),
    md("""
## The report and the workbook

One call writes the HTML report (open it in a browser) and the Excel workbook (one sheet per
table of the catalog) of everything this user can see.
"""),
    code("""
from catalog_nb.notebook.export import export_all

written = export_all(cat, html=report_dir() / 'catalog-report.html',
                     xlsx=report_dir() / 'catalog-workbook.xlsx')
print(f"The HTML report: {written['html']}\\nThe Excel workbook: {written['xlsx']}")
"""),
    md("""
## Where next

- `02-facet-search.ipynb`: facets, advanced queries, paging, the widget driven from code;
- `03-lineage-and-joins.ipynb`: lineage with field lineage, impact analysis, join paths,
  table overlap;
- `04-tag-coverage-and-audit.ipynb`: tag coverage, the tag graph, reviewing suggestions, the
  audits and the audit trail;
- `05-reporting-export.ipynb`: snapshots and what changed, exports, the stewardship sheet,
  favorites and reviews.
"""),
]

FACET_SEARCH: list[Cell] = [
    header("""
# Facet search

Keywords, facets, sorting, paging and advanced queries, as DataFrames; then the facet search
widget, driven from code the way a click drives it.
"""),
    SETUP,
    md("""
## The facet catalogue

Every facet the service offers and its categories (only what this user may see).
"""),
    code("""
facets = cat.facets()
facets.groupby('facet').agg(
    categories=('category', 'count'),
    examples=('category', lambda c: ', '.join(c.dropna().astype(str)[:5])),
)
"""),
    code("""
everything = cat.search('')
counts = everything.facets
fig, axes = plt.subplots(1, 3, figsize=(12, 3))
for ax, facet in zip(axes, ['resourceType', 'fileFormat', 'dataSource'], strict=True):
    shown = counts[counts['facet'] == facet].set_index('category')['count']
    shown.sort_values().plot.barh(ax=ax, title=facet)
fig.tight_layout()
"""),
    md("""
## Keywords and facets

All words must match (names, paths, descriptions, field names, tags). Categories of one facet
are ORed, facets are ANDed.
"""),
    code("""
result = cat.search('customer')
result.frame[['name', 'source', 'path', 'type', 'format', 'rows', 'score']]
"""),
    code("""
source = pick(cat.sources(), 'demo_files', column='name')['name']
files = result.refine(add={'dataSource': [source]})
print(repr(files))
files.frame[['name', 'path', 'type', 'format', 'tags']]
"""),
    code("""
largest = cat.search('', facets={'resourceType': ['table', 'file']}, sort='-rows', limit=5)
largest.frame[['name', 'source', 'type', 'rows', 'size']]
"""),
    md("""
## Advanced queries

`field:value` terms (`name:`, `path:`, `field:`, `tag:`, `source:`, `format:`, `type:`...),
quoted phrases, `AND` / `OR` / `NOT`, parentheses, `*` prefixes.
"""),
    code("""
query = 'type:view OR (format:csv AND NOT path:sales*)'
cat.search(query, advanced=True).frame[['name', 'source', 'type', 'format']]
"""),
    code("""
from catalog_nb import BadRequestError

try:
    cat.search('name:(unclosed', advanced=True)
except BadRequestError as error:
    print(error.error_code, '-', error.message)
"""),
    md("""
## Paging

A result holds its first page; `.page(n)` reads another, `.all()` every one.
"""),
    code("""
paged = cat.search('', page_size=5)
print(f'{paged.total} matches in {paged.page_count} pages of {paged.page_size}')
paged.page(1)[['name', 'source', 'type']]
"""),
    code("paged.all()[['name', 'source', 'type']].tail()"),
    md("""
## The widget

`FacetSearch` is the same search as a page in the cell: tick facets (the count stands beside
each category; a click toggles it), remove a filter with its chip's ✕ or all of them with
"clear all", switch between BASIC and ADVANCED queries, click a header to sort, click a row for
its fields and tags, page with ◀ ▶, and "load into a DataFrame" puts pandas code reading the
chosen resource into the next cell. Partitions fold under their collection; the words searched
are highlighted.

Everything a click does can be done from code: set a facet selector's value, press a button,
set the grid's `sort` or `value` (the clicked row's key).
"""),
    code("""
from catalog_nb.notebook import FacetSearch

panel = FacetSearch(cat, '', top_n=10, page_size=8)
panel
"""),
    code("""
kinds = panel.facet_selectors['resourceType']
kinds.value = tuple(v for _, v in kinds.options if v in ('table', 'view'))
print(f'{panel.result.total} tables and views, the first {len(panel.frame)} on this page')
panel.frame[['name', 'source', 'type', 'rows']]
"""),
    code("""
panel.rows.sort = '-rows'  # what a click on the Rows header does (again: ascending)
print(panel.page_label.value, '· sorted by', panel.sort_by.value)
panel.frame[['name', 'type', 'rows', 'size']].head(3)
"""),
    code("""
panel.rows.value = panel.frame['key'].iloc[0]
panel.selected[['name', 'data_type', 'density', 'distinct_count']]
"""),
    code("print(panel.load_code())  # what 'load into a DataFrame' writes for the chosen row"),
]

LINEAGE_AND_JOINS: list[Cell] = [
    header("""
# Lineage and joins

Where data comes from, what depends on it, and how resources join: as networkx graphs,
DataFrames and drawings.
"""),
    SETUP,
    code("""
from catalog_nb.notebook.drawing import (
    draw_join_graph,
    draw_lineage,
    draw_overlap_matrix,
)

resources = cat.resources()
"""),
    md("""
## Lineage of a view

A view's SQL says which tables it reads (FACTUAL lineage), and for each output column which
input columns it is computed from (`fields=True`).
"""),
    code("""
views = resources[resources['type'] == 'view']
view = pick(views if len(views) else resources, 'sales.customer_revenue')
graph = cat.lineage(view['key'], upstream=3, downstream=2, fields=True)
print(f"{view['path']}: {graph.number_of_nodes()} resources, {graph.number_of_edges()} edges")
draw_lineage(graph);
"""),
    code("""
edges = pd.DataFrame(
    [{'from': graph.nodes[u]['name'], 'to': graph.nodes[v]['name'], **data}
     for u, v, data in graph.edges(data=True)]
)
edges[['from', 'to', 'lineage_type', 'score']]
"""),
    code("""
field_lineage = pd.DataFrame(
    [{'from': graph.nodes[u]['name'], 'to': graph.nodes[v]['name'], **mapping}
     for u, v, data in graph.edges(data=True) for mapping in data.get('field_lineage') or []]
)
field_lineage
"""),
    md("""
## Impact: what depends on a table

Everything downstream, with the distance and the neighbour it is reached through.
"""),
    code("""
tables = resources[resources['type'] == 'table']
table = pick(tables if len(tables) else resources, 'sales.customers')
cat.impact(table['key'])
"""),
    md("""
## Files derived from files

INFERRED lineage: a file whose fields' values are contained in an older file's fields is a
copy, a subset or a filtered version of it. The evidence says why.
"""),
    code("""
inferred = cat.lineage_graph(types=['INFERRED'])
pd.DataFrame(
    [{'source': inferred.nodes[u]['path'], 'derived': inferred.nodes[v]['path'],
      'score': d['score'], **{k: d['evidence'].get(k) for k in ('matchedFields', 'rowRatio')}}
     for u, v, d in inferred.edges(data=True)]
)
"""),
    code("""
everything = cat.lineage_graph()
fig, ax = plt.subplots(figsize=(11, 6))
draw_lineage(everything, ax=ax);
"""),
    md("""
## Join conditions

Declared foreign keys and discovered ones (a key holding another field's values), with
cardinality and score, best first. A score is calibrated: about nine in ten discovered
conditions scoring 0.9 are true. Each resource's own conditions are in its view too
(`cat.resource(...).joins`), as are the keys profiling inferred from its data
(`.inferred_keys`).
"""),
    code("""
conditions = cat.join_conditions()
conditions[['left_path', 'left_cols', 'right_path', 'right_cols', 'cardinality', 'score',
            'origin']].head(15)
"""),
    code("""
# The default picture: conditions scoring 0.85 or more, copies of one table merged into one
# node, the strongest join of each referring column drawn with its columns.
joins = cat.join_graph()
print(f"{joins.number_of_nodes()} tables ({joins.graph['resource_count']} resources), "
      f"{joins.number_of_edges()} joins")
fig, ax = plt.subplots(figsize=(11, 7))
draw_join_graph(joins, ax=ax);
"""),
    code("""
orders = cat.resource(pick(resources, 'sales.orders')['key'])
print('inferred key:', orders.inferred_keys.describe())
orders.joins[['left_path', 'left_cols', 'right_path', 'right_cols', 'score']].head(5)
"""),
    md("""
## How to get from one resource to another

`join_paths` lists the best chains of joins between two resources, one row per hop: here from
a table of the database to a CSV file.
"""),
    code("""
start = pick(resources, 'sales.products')
end = pick(resources[resources['key'] != start['key']], 'crm/customers.csv')
paths = cat.join_paths(start['key'], end['key'], max_hops=3)
print(f"{paths.attrs['paths_found']} path(s) from {start['path']} to {end['path']}")
paths[['path', 'step', 'left_path', 'left_cols', 'right_path', 'right_cols', 'cardinality',
       'score', 'path_score']]
"""),
    md("""
## Table overlap

Which field names two tables share; the matrix compares several at once.
"""),
    code("""
# The overlap compares tables and views of SQL sources, named schema.table.
sql = resources[resources['type'].isin(['table', 'view'])]
if len(sql) >= 2:
    one = pick(sql, 'sales.customers')['path']
    two = pick(sql[sql['path'] != one], 'hr.employees')['path']
    overlap = cat.overlap(one, two)
    print(f"{one} and {two}: {overlap.attrs['overlap_percent']:.0f}% of the fields are common")
    display(overlap)
else:
    print('This user sees fewer than two SQL tables: nothing to compare.')
"""),
    code("""
if len(sql) >= 2:
    preferred = ['sales.customers', 'sales.orders', 'sales.order_items', 'hr.employees',
                 'hr.departments']
    names = [n for n in preferred if n in set(sql['path'])] or list(sql['path'][:5])
    matrix = cat.overlap_matrix(names)
    draw_overlap_matrix(matrix)
"""),
]

TAG_COVERAGE_AND_AUDIT: list[Cell] = [
    header("""
# Tag coverage and audits

How much of the catalog is tagged, which resources carry which tags, the suggestions discovery
made, and the ad-hoc audits: who can see sensitive data, what is undocumented, what changed.
It reviews suggestions and reads the audit trail: run it as an administrator (the demo logs in
as one).
"""),
    SETUP,
    code("""
from catalog_nb.notebook import audit
from catalog_nb.notebook.drawing import draw_audit_events, draw_tag_coverage, draw_tag_graph
"""),
    md("""
## Suggestions and reviewing them

Discovery suggests tags; people accept or reject them. The plan says what a review would do;
this notebook accepts only the suggestions discovery is sure of (weight 1.0), so the coverage
below counts accepted tags.
"""),
    code("""
associations = cat.associations()
associations.pivot_table(index='tag', columns=['source', 'state'], values='key',
                         aggfunc='count', fill_value=0)
"""),
    code("""
plan = cat.review_suggestions(min_weight=1.0)
plan.head(10)
"""),
    code("""
applied = cat.review_suggestions(min_weight=1.0, dry_run=False)
applied.head(10)
"""),
    md("""
## Coverage

Share of fields tagged, per source, per resource, per tag domain and per tag.
"""),
    code("""
coverage = cat.tag_coverage()
coverage[coverage['level'] == 'source']
"""),
    code("""
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
draw_tag_coverage(coverage, ax=axes[0], level='source')
draw_tag_coverage(coverage, ax=axes[1], level='resource')
fig.tight_layout()
"""),
    code("""
graph = cat.tag_graph()
fig, ax = plt.subplots(figsize=(10, 7))
draw_tag_graph(graph, ax=ax);
"""),
    md("""
## Audits

`audit.run_all(cat)` runs every audit; each is also a function of its own.
"""),
    code("""
findings = audit.run_all(cat)
findings.groupby(['audit', 'severity']).size().unstack(fill_value=0)
"""),
    code("""
findings.query("severity == 'high'")[['audit', 'object_type', 'object', 'detail']]
"""),
    md("""
Who can see sensitive data: one row per role, data source and sensitive tag, with the users
holding the role.
"""),
    code("""
exposure = audit.sensitive_exposure(cat)
exposure[['role', 'source', 'tag', 'count', 'users', 'detail']]
"""),
    code("audit.undocumented(cat)[['object', 'detail']].head(10)"),
    md("""
## The audit trail

Every write and every login is recorded (administrators read it).
"""),
    code("""
events = cat.audit_events(limit=500)
events.groupby(['action', 'object_type']).size().unstack(fill_value=0)
"""),
    code("""
# events per user, stacked by action; the legend beside the bars
draw_audit_events(events);
"""),
]

REPORTING_EXPORT: list[Cell] = [
    header("""
# Reporting and export

Snapshots of the catalog (Parquet, readable without a server) and what changed between two of
them, the Excel workbook and the HTML report, CSV files, the stewardship sheet people fill in
and that is read back, and favorites, reviews and the service configuration. It changes a
description for a moment (and puts it back): run it as a steward or an administrator (the demo
logs in as one).
"""),
    SETUP,
    code("""
import catalog_nb

out = report_dir()
resources = cat.resources()
target = pick(resources, 'crm/customers.csv')
"""),
    md("""
## Snapshots and what changed

A snapshot is a folder of Parquet files with a manifest: it opens without a server, the audits
run on it as on a live catalog, and two of them compare. Here: one snapshot, a change of a
description, a second snapshot, and their differences (the description is put back after).
"""),
    code("""
folder = out / 'snapshots' / pd.Timestamp.now().strftime('%Y%m%d-%H%M%S-%f')
folder.mkdir(parents=True)
before = cat.snapshot(folder / 'before')
old_description = target['description']
cat.update_resource(target['key'], description='Customers of the CRM, one row per customer.')
after = cat.snapshot(folder / 'after')
cat.update_resource(target['key'], description='' if pd.isna(old_description) else old_description)
changes = catalog_nb.diff(before, after)
changes
"""),
    code("changes.summary"),
    code("changes.changed['resources']"),
    code("""
from catalog_nb.notebook import audit

offline = catalog_nb.open_snapshot(before)
print(offline)
audit.undocumented(offline).head()
"""),
    md("""
## The workbook, the report and CSV files

One sheet per table (the audit findings, users, roles, sources, tags, associations, resources,
fields); the same tables as CSV files; and one self-contained HTML page.
"""),
    code("""
from catalog_nb.notebook.export import export_all, read_stewardship_sheet, stewardship_sheet

written = export_all(cat, xlsx=out / 'catalog-workbook.xlsx', html=out / 'catalog-report.html',
                     csv=out / 'csv')
written
"""),
    code("""
sheets = pd.read_excel(written['xlsx'], sheet_name=None)
pd.Series({name: len(sheet) for name, sheet in sheets.items()}, name='rows').to_frame()
"""),
    code("sheets['resources'].head()"),
    md("""
## The stewardship sheet

A workbook stewards edit in a spreadsheet (descriptions, owners, tags); reading it back gives
a plan (a dry run) of what to change. Here the notebook plays the steward: it fills in one
description and accepts one suggested tag.
"""),
    code("""
from openpyxl import load_workbook

sheet_path = stewardship_sheet(cat, out / 'stewardship.xlsx', scope=target['source'])
book = load_workbook(sheet_path)
rows = book['stewardship']
column = {cell.value: cell.column for cell in rows[1]}

def cell(row, name):
    return rows.cell(row, column[name])

for row in range(2, rows.max_row + 1):
    if cell(row, 'kind').value == 'resource' and cell(row, 'path').value == target['path']:
        cell(row, 'description').value = 'Customers of the CRM (from the steward).'
    suggested = cell(row, 'suggested_tags').value
    if cell(row, 'kind').value == 'field' and suggested and not cell(row, 'tags').value:
        cell(row, 'tags').value = suggested.split(';')[0].strip()
        break
book.save(sheet_path)
"""),
    code("""
plan = read_stewardship_sheet(cat, sheet_path)
print(plan)
plan.updates[['path', 'field', 'property', 'current', 'new', 'action']]
"""),
    code("plan.tags"),
    md("""
`plan.apply()` would write it. The notebook leaves the catalog as it was.

## Favorites, reviews and the configuration
"""),
    code("""
cat.add_favorite(target['key'])
cat.favorites()
"""),
    code("""
cat.review(target['key'], rating=4, title='Clean', text='Few missing e-mails; ids are unique.')
cat.reviews(target['key'])
"""),
    code("cat.config()"),
]

NOTEBOOK_CELLS: dict[str, list[Cell]] = {
    "01-tour.ipynb": TOUR,
    "02-facet-search.ipynb": FACET_SEARCH,
    "03-lineage-and-joins.ipynb": LINEAGE_AND_JOINS,
    "04-tag-coverage-and-audit.ipynb": TAG_COVERAGE_AND_AUDIT,
    "05-reporting-export.ipynb": REPORTING_EXPORT,
}


def build(cells: list[Cell]) -> nbformat.NotebookNode:
    """A notebook of ``cells``, for the standard ``python3`` kernel, without outputs."""
    nb = new_notebook(
        cells=[new_markdown_cell(text) if kind == "markdown" else new_code_cell(text)
               for kind, text in (setup_cell(cells) if c == SETUP else c for c in cells)],
        metadata={
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                           "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    # Stable ids keep the files byte-identical from one generation to the next.
    for number, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{number:02d}"
    return nb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a notebook differs from what this script writes")
    args = parser.parse_args()
    stale = []
    NOTEBOOKS.mkdir(exist_ok=True)
    for name, cells in NOTEBOOK_CELLS.items():
        path = NOTEBOOKS / name
        text = nbformat.writes(build(cells)) + "\n"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print(f"stale (run scripts/make-notebooks.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
