"""What SQL typed by a user may do on a capture: read, and nothing else.

The connection is opened read-only, and `PRAGMA query_only` stops writes to its temp schema, but
neither stops a statement that changes the connection itself (BEGIN, SAVEPOINT, PRAGMA
query_only=0, PRAGMA writable_schema=1) or one that writes another file (ATTACH, VACUUM INTO).
`ReadOnly` is an SQLite authorizer that allows only what reads: SELECT and the tables and
common table expressions it uses, the PRAGMAs that only report something, and the functions that
compute a value from their arguments (`FUNCTIONS`). Every other function is refused, whatever this
SQLite was built with: `fts3_tokenizer` reads and replaces a pointer inside the process,
`load_extension` runs a library's code, `sqlite_log` writes to the process's log, and an
extension's function is unknown by definition.
"""

from __future__ import annotations

import sqlite3
from typing import Final

# PRAGMAs that report and change nothing, with or without an argument (a table, an index, a
# limit on the problems listed).
_REPORTS_ABOUT: Final = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
     "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"}
)  # fmt: skip
# PRAGMAs that report a value without an argument, and set it with one.
_VALUES: Final = frozenset(
    {"user_version", "application_id", "schema_version", "data_version", "page_size",
     "page_count", "freelist_count", "max_page_count", "encoding", "journal_mode",
     "auto_vacuum", "compile_options", "database_list", "collation_list", "function_list",
     "module_list", "pragma_list", "query_only", "foreign_keys"}
)  # fmt: skip
_READS: Final = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
# SQLite's own functions that compute a value from their arguments and the rows (scalar,
# aggregate, window, date and time, math, JSON), including those of versions newer than
# Debian's; the names SQLite gives the authorizer, lower case.
FUNCTIONS: Final = frozenset(
    {
        # scalar
        "abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull",
        "iif", "instr", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min",
        "nullif", "octet_length", "printf", "quote", "random", "randomblob", "replace", "round",
        "rtrim", "sign", "soundex", "substr", "substring", "trim", "typeof", "unhex", "unicode",
        "unlikely", "upper", "zeroblob", "sqlite_version", "sqlite_source_id",
        # aggregate and window
        "avg", "count", "group_concat", "string_agg", "sum", "total", "median", "row_number",
        "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
        "first_value", "last_value", "nth_value",
        # date and time
        "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
        "current_date", "current_time", "current_timestamp",
        # math
        "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos",
        "cosh", "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow",
        "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
        # JSON: each returns a value built from its arguments; none writes to the capture
        "json", "jsonb", "json_array", "jsonb_array", "json_array_length", "json_error_position",
        "json_extract", "jsonb_extract", "json_insert", "jsonb_insert", "json_object",
        "jsonb_object", "json_patch", "jsonb_patch", "json_pretty", "json_quote", "json_remove",
        "jsonb_remove", "json_replace", "jsonb_replace", "json_set", "jsonb_set", "json_type",
        "json_valid", "json_group_array", "jsonb_group_array", "json_group_object",
        "jsonb_group_object", "->", "->>",
    }
)  # fmt: skip
# The authorizer's action codes by the statement they stand for ("CREATE TEMP TABLE").
_ACTIONS: Final = (
    "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER", "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE",
    "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "TRANSACTION", "UPDATE", "ATTACH",
    "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE", "CREATE_VTABLE", "DROP_VTABLE", "SAVEPOINT",
)  # fmt: skip
_NAMES: Final = {
    getattr(sqlite3, f"SQLITE_{a}"): a.replace("_", " ")
    for a in _ACTIONS
    if hasattr(sqlite3, f"SQLITE_{a}")
}


class ReadOnly:
    """An authorizer (sqlite3.Connection.set_authorizer) that denies every action that is not
    a read; `refused` says what the last denied one was."""

    def __init__(self) -> None:
        self.refused: str | None = None

    def __call__(self, action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
        if action in _READS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            if name in FUNCTIONS:
                return sqlite3.SQLITE_OK
            self.refused = f"function {arg2}(), which is not one that only computes a value"
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and arg1 is not None:
            name = arg1.lower()
            if name in _REPORTS_ABOUT or (name in _VALUES and arg2 is None):
                return sqlite3.SQLITE_OK
            self.refused = f"PRAGMA {arg1}" + (f"={arg2}" if arg2 is not None else "")
        else:
            what = _NAMES.get(action, f"action {action}")
            self.refused = f"{what} {arg1}" if arg1 else what
        return sqlite3.SQLITE_DENY
