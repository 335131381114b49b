"""Captures at fleet scale: a columnar dataset of many captures (Parquet through Arrow), and
the analyses over its history (trends, regressions) on DuckDB or Apache Spark.

Needs the `vkscope[fleet]` extra (pyarrow, duckdb, numpy); Spark also `pyspark` and Java.
docs/fleet.md describes the dataset and the analyses."""
