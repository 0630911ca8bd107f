"""The Valentine side of :mod:`.tpch_valentine`, run in Valentine's own virtual environment.

    <valentine venv>/bin/python -m tests.benchmarks.valentine_worker SPEC.json OUT.json

Imports only the standard library, pandas, pyarrow and ``valentine`` (with its NLTK):
Valentine pins ``python-dateutil<3`` and the project's venv has 4.x, so it lives in a venv of
its own (see :func:`tests.benchmarks.tpch_valentine.ensure_venv`) and never imports
``catalog_nb``.

SPEC names the CSV folder, the Parquet folder, the SQLite database, the tables and the methods.
Every table of every representation becomes one pandas frame named ``representation:table``
(read with pandas' own readers, as a Valentine user would), and each method is run by
``valentine_match`` over every pair of frames: once over all of them, or pair by pair for the
methods in :data:`PAIRWISE`. OUT gets, per method, every scored column pair (both frames, both
columns, the score), the seconds taken, or the error that stopped it.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
import traceback
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Any

import nltk
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from valentine import valentine_match
from valentine.algorithms import (
    Coma,
    Cupid,
    DistributionBased,
    JaccardDistanceMatcher,
    SimilarityFlooding,
)
from valentine.algorithms.jaccard_distance import StringDistanceFunction

# Cupid tokenizes column names with nltk.word_tokenize, whose sentence splitter needs the
# "punkt_tab" model that NLTK downloads at run time. Column names hold no sentence boundary, so
# tokenizing each as one line gives the same tokens without that download.
nltk.word_tokenize = partial(nltk.word_tokenize, preserve_line=True)

MATCHERS: dict[str, Any] = {
    # Schema and instances: Coma sees the values too, as the value-based methods and ours do.
    "Coma": lambda: Coma(use_instances=True),
    "Cupid": Cupid,
    "DistributionBased": DistributionBased,
    # Exact value equality: the default Levenshtein variant compares every value of one column
    # with every value of the other, hours on a 60,000-row lineitem.
    "JaccardDistanceMatcher": lambda: JaccardDistanceMatcher(
        distance_fun=StringDistanceFunction.Exact),
    "SimilarityFlooding": SimilarityFlooding,
}


# Over many frames at once, DistributionBased clusters every column of every frame in one
# integer program (PuLP's CBC): over the 183 columns of the 24 frames it had not finished after
# 8 minutes. One pair of frames at a time (how the Valentine paper evaluates every method)
# takes under a second each. The others run over all frames at once, which only adds corpus-wide
# statistics (Coma's TF-IDF over every column's values) and is what valentine_match offers.
PAIRWISE = {"DistributionBased"}


def read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file as pandas would read it, but with decimals as float64 and dates as
    datetime64: DistributionBased fails on Python ``Decimal`` objects, and the CSV and SQLite
    frames of the same table hold floats too."""
    table = pq.read_table(path)
    schema = pa.schema([field.with_type(pa.float64()) if pa.types.is_decimal(field.type)
                        else field for field in table.schema])
    return table.cast(schema).to_pandas(date_as_object=False)


def frames(spec: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Every table of every representation as a pandas frame, keyed ``representation:table``."""
    out: dict[str, pd.DataFrame] = {}
    for table in spec["tables"]:
        out[f"csv:{table}"] = pd.read_csv(Path(spec["csv"]) / f"{table}.csv")
        out[f"parquet:{table}"] = read_parquet(Path(spec["parquet"]) / f"{table}.parquet")
        with sqlite3.connect(spec["sqlite"]) as db:
            out[f"sqlite:{table}"] = pd.read_sql_query(f'SELECT * FROM "{table}"', db)
    return out


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text())
    data = frames(spec)
    names = list(data)
    results: dict[str, Any] = {}
    for method in spec["methods"]:
        started = time.monotonic()
        try:
            if method in PAIRWISE:
                matches = {}
                for left, right in combinations(names, 2):
                    matches.update(valentine_match([data[left], data[right]], MATCHERS[method](),
                                                   df_names=[left, right]))
            else:
                matches = valentine_match(list(data.values()), MATCHERS[method](),
                                          df_names=names)
        except Exception as error:  # noqa: BLE001 - one method failing must not hide the others
            results[method] = {"error": f"{type(error).__name__}: {error}",
                               "trace": traceback.format_exc(limit=3)}
        else:
            results[method] = {
                "seconds": time.monotonic() - started,
                "matches": [[p.source_table, p.source_column, p.target_table, p.target_column,
                             float(score)] for p, score in matches.items()],
            }
        print(f"  {method}: {time.monotonic() - started:.1f} s"
              f"{'' if 'matches' in results[method] else ' - ' + results[method]['error']}",
              flush=True)
        Path(argv[1]).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
