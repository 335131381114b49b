"""The two engines the analyses run on, behind one small interface: DuckDB in this process
(the default), and Apache Spark, local or on a cluster (`master`: local[N], spark://HOST:PORT,
yarn, k8s://...).

Each registers the dataset's documented views (`captures`, `frames`, `instances`, and
`capture_tags`, one row per capture and tag), runs SQL and hands results back as Arrow. The
dataset's tables are read from their Parquet files by column name, with the schema the dataset
says (schema.py and its counter columns), so files written before a column was added read it as
NULL on both engines, and an empty dataset has empty views.
"""

from __future__ import annotations

import os
from typing import Any, Final, Protocol

import pyarrow as pa

from .analyses import DUCKDB, SPARK, Dialect
from .layout import Dataset
from .missing import require
from .schema import SCHEMAS, instances_schema

ENGINES: Final = ("duckdb", "spark")


class Engine(Protocol):
    name: str
    dialect: Dialect

    def register(self, name: str, table: pa.Table) -> None:
        """A small Arrow table as a view of that name."""

    def keep(self, name: str, sql: str) -> None:
        """The result of `sql` as a table of that name, computed once."""

    def sql(self, sql: str) -> pa.Table: ...

    def close(self) -> None: ...


def table_schema(dataset: Dataset, table: str) -> pa.Schema:
    if table == "instances":
        return instances_schema(sorted(dataset.manifest().counters))
    return SCHEMAS[table]


class DuckDBEngine:
    name = "duckdb"
    dialect = DUCKDB

    def __init__(
        self, dataset: Dataset, *, threads: int | None = None, memory_limit: str | None = None
    ) -> None:
        duckdb = require("duckdb")
        self._duckdb = duckdb
        config: dict[str, Any] = {}
        if threads:
            config["threads"] = threads
        if memory_limit:
            config["memory_limit"] = memory_limit
        self.db = duckdb.connect(":memory:", config=config)
        # Each query reads the footers of every file it scans: kept after the first read.
        self.db.execute("SET parquet_metadata_cache = true")
        self._registered: dict[str, pa.Table] = {}
        for table in SCHEMAS:
            self._view(dataset, table)
        self.db.execute(
            "CREATE TEMP VIEW capture_tags AS SELECT capture_id, e.key AS key, e.value AS value "
            "FROM (SELECT capture_id, unnest(map_entries(tags)) AS e FROM captures)"
        )

    def _view(self, dataset: Dataset, table: str) -> None:
        schema = table_schema(dataset, table)
        files = dataset.sources(table)
        if not files:
            self.register(table, schema.empty_table())
            return
        # The dataset's schema, column by column: a file without a column reads it as NULL.
        columns = ", ".join(
            f'CAST("{f.name}" AS {_duckdb_type(f.type)}) AS "{f.name}"' for f in schema
        )
        listing = ", ".join("'" + str(p).replace("'", "''") + "'" for p in files)
        # captures is small (a row per capture) and read by every step: read once.
        kind = "TABLE" if table == "captures" else "VIEW"
        self.db.execute(
            f"CREATE TEMP {kind} {table} AS SELECT {columns} "
            f"FROM read_parquet([{listing}], union_by_name = true)"
        )

    def register(self, name: str, table: pa.Table) -> None:
        self._registered[name] = table  # DuckDB scans it in place: keep it alive
        self.db.register(name, table)

    def keep(self, name: str, sql: str) -> None:
        self.db.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}")

    def sql(self, sql: str) -> pa.Table:
        try:
            relation = self.db.sql(sql)
            if relation is None:  # a statement without rows
                return pa.table({})
            # DuckDB 2 names it to_arrow_table; in 1.x, arrow() gives the table.
            fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
            table: pa.Table = fetch()
        except self._duckdb.Error as exc:
            raise QueryError(str(exc).splitlines()[0]) from None
        return table

    def close(self) -> None:
        self.db.close()


def _duckdb_type(t: pa.DataType) -> str:
    if pa.types.is_map(t):
        return "MAP(VARCHAR, VARCHAR)"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ"
    names = {
        pa.string(): "VARCHAR",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN",
    }
    return names[t]


class QueryError(Exception):
    """SQL an engine refused, with its first line of why."""


class EngineError(Exception):
    """An engine that could not start (Spark without Java, a master that cannot be reached)."""


# Local mode (one machine): a few shuffle partitions instead of Spark's 200, which are made for
# a cluster, and small Parquet files packed into few tasks. A cluster keeps its own settings.
_LOCAL: Final = {
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "2g",
    "spark.sql.files.openCostInBytes": str(64 << 10),
    "spark.ui.enabled": "false",
}


class SparkEngine:
    """Spark SQL through PySpark. A session of one's own is made with `master` (local[2] by
    default); SPARK_* settings and spark-submit's options apply as usual."""

    name = "spark"
    dialect = SPARK

    def __init__(
        self,
        dataset: Dataset,
        *,
        master: str | None = None,
        config: dict[str, str] | None = None,
    ) -> None:
        require("pyspark")
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.appName("vkscope-fleet")
        # Under spark-submit (cli/submit.py) the session's master and settings are the submitted
        # ones: PySpark's driver then talks to the JVM spark-submit started.
        submitted = "PYSPARK_GATEWAY_PORT" in os.environ
        if master or not submitted:
            builder = builder.master(master or "local[2]")
        settings = {
            "spark.sql.session.timeZone": "UTC",
            "spark.ui.showConsoleProgress": "false",
            **(_LOCAL if not submitted and (master or "local").startswith("local") else {}),
            **(config or {}),
        }
        for key, value in settings.items():
            builder = builder.config(key, value)
        from pyspark.errors import PySparkException

        try:
            self.session = builder.getOrCreate()
        except PySparkException as exc:
            raise EngineError(
                f"Spark could not start ({str(exc).strip().splitlines()[0]}); it needs a Java "
                "17+ runtime (Debian: apt-get install openjdk-17-jre-headless) and, with "
                "--master, a cluster it can reach"
            ) from None
        self.session.sparkContext.setLogLevel("ERROR")
        self._kept: list[Any] = []
        for table in SCHEMAS:
            self._view(dataset, table)
        self.session.sql(
            "CREATE OR REPLACE TEMP VIEW capture_tags AS "
            "SELECT capture_id, key, value FROM captures LATERAL VIEW explode(tags) t AS key, value"
        )

    def _view(self, dataset: Dataset, table: str) -> None:
        schema = table_schema(dataset, table)
        files = [str(p) for p in dataset.sources(table)]
        if not files:
            self.register(table, schema.empty_table())
            return
        spark_schema = _spark_schema(schema)
        frame = self.session.read.schema(spark_schema).parquet(*files)
        frame.createOrReplaceTempView(table)

    def register(self, name: str, table: pa.Table) -> None:
        frame = self.session.createDataFrame(table.to_pylist(), _spark_schema(table.schema))
        frame.createOrReplaceTempView(name)

    def keep(self, name: str, sql: str) -> None:
        # Marked for caching, not computed now: the first query that reads it computes it with
        # everything else it needs in one job, and later queries read the cache. Counting each
        # step as it is kept ran a job per step, most of a small history's time on Spark.
        frame = self.session.sql(sql).cache()
        frame.createOrReplaceTempView(name)
        self._kept.append(frame)

    def sql(self, sql: str) -> pa.Table:
        from pyspark.errors import PySparkException

        try:
            frame = self.session.sql(sql)
            return frame.toArrow()
        except PySparkException as exc:
            raise QueryError(str(exc).strip().splitlines()[0]) from None

    def close(self) -> None:
        for frame in self._kept:
            frame.unpersist()
        for name in [t.name for t in self.session.catalog.listTables() if t.isTemporary]:
            self.session.catalog.dropTempView(name)


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql import types as T

    def convert(t: pa.DataType) -> Any:
        if pa.types.is_map(t):
            return T.MapType(convert(t.key_type), convert(t.item_type))
        if pa.types.is_timestamp(t):
            return T.TimestampType()
        return {
            pa.string(): T.StringType(),
            pa.int32(): T.IntegerType(),
            pa.int64(): T.LongType(),
            pa.float64(): T.DoubleType(),
            pa.bool_(): T.BooleanType(),
        }[t]

    return T.StructType([T.StructField(f.name, convert(f.type), True) for f in schema])


def open_engine(
    name: str, dataset: Dataset, *, master: str | None = None, threads: int | None = None
) -> Engine:
    if name == "spark":
        return SparkEngine(dataset, master=master)
    return DuckDBEngine(dataset, threads=threads)
