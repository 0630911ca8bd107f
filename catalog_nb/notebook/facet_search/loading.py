"""The "load into a DataFrame" action of the search panel: pandas code that reads a resource's
data where its data source keeps it.

The catalog describes data; it does not serve it. So the panel writes the code an analyst
would write (``pd.read_csv`` of the file under the source's folder, ``pd.read_sql_table`` of
a table through the source's SQLAlchemy URL, whose password the service never returns) and
either puts it in the next cell or runs it.

>>> load_code({"resourceType": "resource_type_file", "fileFormat": "csv",
...            "resourcePath": "crm/customers.csv"}, {"sourceType": "FILE", "uri": "/lake"})
"import pandas as pd\\n\\nframe = pd.read_csv('/lake/crm/customers.csv')\\nframe"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["load_code", "put_in_next_cell", "run_load_code"]

_READERS = {
    "csv": "pd.read_csv({path!r})",
    "tsv": "pd.read_csv({path!r}, sep='\\t')",
    "parquet": "pd.read_parquet({path!r})",
    "json": "pd.read_json({path!r}, lines=True)",
    "jsonl": "pd.read_json({path!r}, lines=True)",
    "ndjson": "pd.read_json({path!r}, lines=True)",
}


def _reader(file_format: str, path: str) -> str:
    template = _READERS.get(file_format.lower())
    if template is None:
        raise ValueError(
            f"Cannot write pandas code for files of format {file_format!r}: "
            f"known formats are {', '.join(sorted(_READERS))}."
        )
    return template.format(path=path)


def load_code(resource: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    """Python code that reads ``resource`` (its JSON) of ``source`` (its data source's JSON)
    into ``frame``.

    Raises:
        ValueError: a resource this cannot read (an unknown file format, a source of no
            known kind).
    """
    kind = str(resource.get("resourceType") or "")
    uri = str(source.get("uri") or "").rstrip("/")
    path = str(resource.get("resourcePath") or "")
    file_format = str(resource.get("fileFormat") or path.rsplit(".", 1)[-1])
    lines = ["import pandas as pd", ""]
    if source.get("sourceType") == "SQL":
        table = str(resource.get("tableName") or path.rsplit(".", 1)[-1])
        schema = resource.get("dataSchemaName")
        lines.append(f"# The service never returns the password of {uri!r}: add it if needed.")
        args = f"{table!r}, {uri!r}" + (f", schema={schema!r}" if schema else "")
        lines.append(f"frame = pd.read_sql_table({args})")
    elif source.get("sourceType") == "FILE" and kind.endswith("collection"):
        lines[0] = "from pathlib import Path\n\nimport pandas as pd"
        lines.append(
            f"parts = sorted(Path({uri + '/' + path!r}).glob('*.{file_format.lower()}'))"
        )
        lines.append(
            "frame = pd.concat([" + _reader(file_format, "PART").replace("'PART'", "part")
            + " for part in parts], ignore_index=True)"
        )
    elif source.get("sourceType") == "FILE":
        lines.append(f"frame = {_reader(file_format, uri + '/' + path)}")
    else:
        kind = str(source.get("sourceType"))
        raise ValueError(f"Cannot write pandas code for a source of type {kind!r}.")
    lines.append("frame")
    return "\n".join(lines)


def run_load_code(code: str) -> pd.DataFrame:
    """Run code :func:`load_code` wrote (literals quoted with ``repr``) and return its
    ``frame``."""
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return pd.DataFrame(namespace["frame"])


def put_in_next_cell(code: str) -> str:
    """Put ``code`` into the notebook's next cell (IPython's ``set_next_input``); outside
    IPython it is only returned."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.set_next_input(code, replace=False)
    return code
