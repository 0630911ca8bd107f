"""A PROFILE job's resources profiled on Spark (``engine: "spark"``), for
:class:`catalog_nb.server.job_work.ClaimedJob`.

FILE sources go to Spark, folders and object stores alike (executors read objects with the
profiler's own object-store readers, no Hadoop S3 connector needed): an SQL source's tables are
profiled by the local engine whatever the job's engine, as the database already does the
reading and a Spark job would only add a JVM between them (the profile is the same either
way; the job keeps its engine as asked). The Spark session is the
job process's one (:mod:`catalog_nb.server.spark_session`), started on the first such job and
kept for the next. Spark that cannot be used (no Java, a master that cannot be reached, a
cluster failing the tasks) FAILS the job with a sentence, never a Java stack trace; a file that
cannot be read is an ERROR resource, as with the local engine.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from catalog_nb.contract import ResourceType
from catalog_nb.server.job_discovery import JobFailed
from catalog_nb.server.profiling.locations import ObjectFolder
from catalog_nb.server.profiling.model import ReadProgress, ResourceProfile
from catalog_nb.server.settings import Settings

log = logging.getLogger(__name__)


def profile_on_spark(settings: Settings, folder: object, target: ResourceProfile,
                     sample_rows: int, on_read: ReadProgress) -> ResourceProfile:
    """``target`` (a file or a collection of ``folder``) profiled by the Spark engine."""
    from catalog_nb.server.spark_session import SparkUnavailable, spark_session

    if not isinstance(folder, Path | ObjectFolder):
        raise JobFailed("The Spark engine profiles FILE sources (folders and object stores).")
    try:
        session = spark_session(settings.spark_master)
        from catalog_nb.server.profiling import spark

        if target.resource_type == ResourceType.COLLECTION.value:
            return spark.profile_collection(session, target.path, root=folder,
                                            members=target.members, sample_rows=sample_rows,
                                            on_read=on_read)
        return spark.profile_file(session, target.path, root=folder, sample_rows=sample_rows,
                                  on_read=on_read)
    except SparkUnavailable as exc:
        raise JobFailed(f"The Spark engine cannot profile: {exc}") from None
    except Exception as exc:  # one resource's fault is its ERROR, as with the local engine
        log.exception("profiling %s on Spark failed", target.path)
        return replace(target, fields=[]).fail(
            f"Unexpected error while profiling on Spark: {type(exc).__name__}: {exc}")
