"""The capture file's SQLite schema, in one place for the writer, the reader and the docs.

SCHEMA_VERSION is stored as PRAGMA user_version and as meta.schema_version. It changes whenever a
reader of the previous version would misread a file of the new one; vkscope reads every version up
to its own (compat.py presents older files in the current shape) and refuses newer ones.
docs/capture-schema.md describes every column and the history of versions.
"""

from __future__ import annotations

from typing import Any, Final

# 1: the timeline. 2: GPU timing (clock domains, timing status per instance, submit completion,
# captured frames); the timing fields of annexes moved out of `annex` into their own columns.
# 3: while a capture is written, its workloads, instances and annexes wait in `journal` and are
# built into their tables when it is finalized (journal.py, build.py).
# 4: counters: device_counters (what each queue family of a device collects, from COUNTERS
# messages); each instance's values are kept in its annex.
# 5: device_counters gains what performance_query says of each counter: storage, scope, uuid,
# pass_index, concurrently_impacted (NULL for sources that say none of it).
# 6: command_buffer_counters: performance_query's COMMAND_BUFFER-scope counters, per submitted
# command buffer (from COMMAND_BUFFER_COUNTERS messages).
# 7: submit rows, completions and FRAMEs wait in the journal too: `submits` and `frames` stay
# empty until the capture is finalized.
# 8: provenance: `tags` (vkscope run --tag KEY=VALUE) and meta.capture_id, the capture's own
# identity (a fleet dataset keys captures by it).
# 9: the GPU's state sampled by the host: devices.pci (VK_EXT_pci_bus_info), `gpus` (each GPU
# sampled and what it offers), `device_gpus` (which GPU each device is), `gpu_samples`.
# 10: `instance_columns`: every instance's columns as the columnar read gives them, stored once
# when the capture is finalized (Arrow IPC streams, LZ4), and meta.instance_columns saying what
# they hold; a capture without them is read row by row, as before.
INSTANCE_COLUMNS_SINCE: Final = 10
# 11: the cost budget: devices.budget_percent, and `budget_frames` (what the budget's controller
# saw and decided at each captured frame's end, from FRAME messages); a budgeted capture's
# instances left out of a frame say so in their timing and counters reasons.
# 12: the timer's floor: `timer_floors` (per device and queue family, what back-to-back timestamps
# and empty workloads read, from DEVICE messages), and frames.pipelines and frames.shader_modules
# (what the application compiled in each frame, for the warm-up rule).
# 13: what the budget's controller took out of each frame's time: budget_frames.recording_ns (the
# application's own recording time in the frame) and budget_frames.recording_share.
SCHEMA_VERSION: Final = 13
APPLICATION_ID: Final = 0x766B7363  # 'vksc': lets `file`-like tools tell a capture from any DB

STATUS_CAPTURING: Final = "capturing"
STATUS_COMPLETE: Final = "complete"
STATUS_INCOMPLETE: Final = "incomplete"

# Connection states in processes.state.
OPEN: Final = "open"
GOODBYE: Final = "goodbye"
DISCONNECTED: Final = "disconnected"
OUT_OF_STEP: Final = "out_of_step"
REFUSED: Final = "refused"  # a HELLO with a protocol version this host does not read

# The view is also created, over older files, by compat.py: one definition for both.
INSTANCES_VIEW_SELECT: Final = """
SELECT i.id, i.process, i.submit_id, i.tag_id, i.ordinal,
       s.device, s.queue, s.frame, s.cpu_ns AS submit_cpu_ns,
       w.type, w.api, l.label_path,
       json_patch(coalesce(w.metadata, '{}'), coalesce(i.annex, '{}')) AS metadata,
       i.gpu_begin_ns, i.gpu_end_ns, i.gpu_end_ns - i.gpu_begin_ns AS gpu_ns,
       i.timing, i.timing_reason, i.serialization, s.cpu_complete_ns AS submit_cpu_complete_ns
FROM workload_instances i
JOIN submits s ON s.id = i.submit_row
LEFT JOIN workloads w ON w.process = i.process AND w.tag_id = i.tag_id
LEFT JOIN label_stacks l
       ON l.process = i.process AND l.device = s.device AND l.id = i.label_stack_id
"""

# Each instance's counters, one row per counter: the `counters` object of its annex, or for khr
# counters the values joined over their pass cycle (performance_query.py); an instance without
# counters has no rows, its annex says why in counters_reason. Not stored in the file: every
# reader's connection has it as a temporary view (reader.py), whatever the file's version.
INSTANCE_COUNTERS_SELECT: Final = """
SELECT v.id, v.process, v.submit_id, v.tag_id, v.device, v.queue, v.frame, v.type, v.api,
       v.label_path, v.gpu_ns, c.key AS counter, c.value
FROM instances_view v LEFT JOIN temp.khr_joined k ON k.id = v.id,
     json_each(coalesce(k.counters, json_extract(v.metadata, '$.counters'))) c
WHERE c.key IS NOT NULL
"""

# The khr counters each instance lacks after the join, one row per counter, with why (a
# temporary view like instance_counters).
MISSING_SELECT: Final = """
SELECT v.id, v.process, v.submit_id, v.tag_id, v.device, v.queue, v.frame, v.type, v.api,
       v.label_path, c.key AS counter, c.value AS reason
FROM instances_view v JOIN temp.khr_joined k ON k.id = v.id, json_each(k.missing) c
"""

# Each submitted command buffer's COMMAND_BUFFER-scope counters, one row per counter, with where
# it ran (a temporary view like instance_counters; command buffers without values have no rows,
# command_buffer_counters says why).
COMMAND_BUFFER_COUNTER_VALUES_SELECT: Final = """
SELECT c.process, c.submit_id, s.device, s.queue, s.frame, s.batch, c.pass_index,
       v.key AS counter, v.value
FROM command_buffer_counters c
LEFT JOIN submits s ON s.process = c.process AND s.submit_id = c.submit_id,
     json_each(c.counters) v
WHERE c.counters IS NOT NULL
"""

TABLES: Final = (
    """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value
);
CREATE TABLE processes (
    id INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    peer TEXT,
    pid INTEGER,
    name TEXT,
    layer_version TEXT,
    protocol INTEGER,
    connected_utc TEXT NOT NULL,
    closed_utc TEXT,
    state TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    bad_messages INTEGER NOT NULL DEFAULT 0,
    skipped_messages INTEGER NOT NULL DEFAULT 0,
    dropped INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE devices (
    process INTEGER NOT NULL,
    id INTEGER NOT NULL,
    name TEXT,
    vendor_id INTEGER,
    device_id INTEGER,
    driver_name TEXT,
    driver_info TEXT,
    api_version TEXT,
    timestamp_period_ns REAL,
    clock_domain TEXT,
    clock_max_deviation_ns INTEGER,
    pci TEXT,
    budget_percent REAL,
    PRIMARY KEY (process, id)
);
CREATE TABLE queues (
    process INTEGER NOT NULL,
    device INTEGER NOT NULL,
    id INTEGER NOT NULL,
    family INTEGER,
    queue_index INTEGER,
    flags TEXT,
    timestamp_valid_bits INTEGER,
    PRIMARY KEY (process, device, id)
);
CREATE TABLE frames (
    id INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    device INTEGER,
    number INTEGER,
    queue INTEGER,
    cpu_ns INTEGER,
    reason TEXT,
    captured INTEGER,
    pipelines INTEGER,
    shader_modules INTEGER
);
CREATE TABLE timer_floors (
    process INTEGER NOT NULL,
    device INTEGER NOT NULL,
    family INTEGER NOT NULL,
    period_ns REAL,
    samples INTEGER NOT NULL,
    back_to_back_min_ns REAL,
    back_to_back_median_ns REAL,
    back_to_back_max_ns REAL,
    empty_min_ns REAL,
    empty_median_ns REAL,
    empty_max_ns REAL,
    reason TEXT,
    PRIMARY KEY (process, device, family)
);
CREATE TABLE budget_frames (
    process INTEGER NOT NULL,
    device INTEGER NOT NULL,
    number INTEGER NOT NULL,
    state TEXT NOT NULL,
    workloads INTEGER NOT NULL,
    measured INTEGER NOT NULL,
    interval_ns INTEGER NOT NULL,
    sample INTEGER NOT NULL,
    base_ns INTEGER,
    unit_ns REAL,
    frame_ns REAL,
    rotation INTEGER NOT NULL,
    next INTEGER NOT NULL,
    recording_ns INTEGER,
    recording_share REAL
);
CREATE TABLE label_stacks (
    process INTEGER NOT NULL,
    device INTEGER NOT NULL,
    id INTEGER NOT NULL,
    path TEXT NOT NULL,
    label_path TEXT NOT NULL,
    PRIMARY KEY (process, device, id)
);
CREATE TABLE workloads (
    process INTEGER NOT NULL,
    tag_id INTEGER NOT NULL,
    device INTEGER,
    type TEXT,
    api TEXT,
    metadata TEXT NOT NULL,
    draws INTEGER,
    width INTEGER,
    height INTEGER,
    groups_x INTEGER,
    groups_y INTEGER,
    groups_z INTEGER,
    invocations INTEGER,
    bytes INTEGER,
    pixels INTEGER,
    kind TEXT
);
CREATE TABLE submits (
    id INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    submit_id INTEGER NOT NULL,
    device INTEGER,
    queue INTEGER,
    frame INTEGER,
    cpu_ns INTEGER,
    api TEXT,
    batch INTEGER,
    first_instance INTEGER NOT NULL,
    instance_count INTEGER NOT NULL,
    cpu_complete_ns INTEGER
);
CREATE INDEX submits_by_submit_id ON submits (process, submit_id);
CREATE INDEX submits_by_frame ON submits (frame);
CREATE TABLE workload_instances (
    id INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    submit_row INTEGER NOT NULL,
    submit_id INTEGER NOT NULL,
    tag_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    label_stack_id INTEGER NOT NULL,
    annex TEXT,
    gpu_begin_ns INTEGER,
    gpu_end_ns INTEGER,
    timing TEXT,
    timing_reason TEXT,
    serialization TEXT
);
CREATE TABLE annexes (
    seq INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    submit_id INTEGER NOT NULL,
    tag_id INTEGER NOT NULL,
    payload TEXT NOT NULL
);
CREATE TABLE device_counters (
    process INTEGER NOT NULL,
    device INTEGER NOT NULL,
    family INTEGER NOT NULL,
    source TEXT NOT NULL,
    name TEXT,
    unit TEXT,
    description TEXT,
    reason TEXT,
    storage TEXT,
    scope TEXT,
    uuid TEXT,
    pass_index INTEGER,
    concurrently_impacted INTEGER
);
CREATE TABLE command_buffer_counters (
    process INTEGER NOT NULL,
    submit_id INTEGER NOT NULL,
    pass_index INTEGER,
    counters TEXT,
    reason TEXT
);
CREATE TABLE tags (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE gpus (
    id INTEGER PRIMARY KEY,
    pci TEXT NOT NULL,
    vendor TEXT NOT NULL,
    driver TEXT NOT NULL,
    name TEXT,
    location TEXT,
    interval_ns INTEGER NOT NULL,
    origins TEXT NOT NULL,
    absent TEXT NOT NULL,
    lost TEXT,
    throttle_reasons TEXT NOT NULL,
    graphics_clock_min_mhz INTEGER,
    graphics_clock_max_mhz INTEGER,
    power_limit_w REAL,
    steady_clocks TEXT
);
CREATE TABLE device_gpus (
    process INTEGER NOT NULL,
    device INTEGER NOT NULL,
    gpu INTEGER,
    pci TEXT,
    matched_by TEXT,
    reason TEXT,
    PRIMARY KEY (process, device)
);
CREATE TABLE gpu_samples (
    gpu INTEGER NOT NULL,
    t_ns INTEGER NOT NULL,
    read_ns INTEGER NOT NULL,
    graphics_clock_mhz REAL,
    sm_clock_mhz REAL,
    memory_clock_mhz REAL,
    power_w REAL,
    energy_mj REAL,
    temperature_c REAL,
    utilization_pct REAL,
    throttle INTEGER
);
CREATE INDEX gpu_samples_by_time ON gpu_samples (gpu, t_ns);
CREATE TABLE instance_columns (
    id INTEGER PRIMARY KEY,
    first_instance INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    crc32 INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE logs (
    id INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    level TEXT,
    message TEXT
);
CREATE TABLE journal (
    id INTEGER PRIMARY KEY,
    connection INTEGER NOT NULL,
    process INTEGER NOT NULL,
    kind TEXT NOT NULL,
    count INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE diagnostics (
    id INTEGER PRIMARY KEY,
    connection INTEGER,
    offset INTEGER,
    kind TEXT NOT NULL,
    message_type INTEGER,
    reason TEXT NOT NULL,
    excerpt TEXT
);
CREATE VIEW instances_view AS
"""
    + INSTANCES_VIEW_SELECT
    + ";\n"
)

# The one index on workloads, built once the journal is (store.py, present.py): a WORKLOAD sent
# twice for a tagID leaves two rows until then, and the later one is kept. A version 2 capture
# that was never finalized has its rows but not the index; readers index a copy of their own
# (reader.py).
WORKLOADS_INDEX: Final = "workloads_by_tag"


def final_index(schema: str = "main") -> str:
    return f"CREATE UNIQUE INDEX {schema}.{WORKLOADS_INDEX} ON workloads (process, tag_id)"


def deduplicate_workloads(schema: str = "main") -> str:
    return (
        f"DELETE FROM {schema}.workloads WHERE rowid NOT IN "
        f"(SELECT max(rowid) FROM {schema}.workloads GROUP BY process, tag_id)"
    )


def table_definition(table: str, schema: str) -> str:
    """The CREATE TABLE statement of `table`, for a table of that shape in `schema`."""
    for statement in TABLES.split(";\n"):
        head = f"CREATE TABLE {table} ("
        if statement.strip().startswith(head):
            return statement.strip().replace(head, f"CREATE TABLE {schema}.{table} (", 1)
    raise KeyError(table)


def definitions(schema: str) -> list[str]:
    """The tables and indexes of a capture (not its view), created in `schema`."""
    out = []
    for statement in (s.strip() for s in TABLES.split(";\n")):
        for head in ("CREATE TABLE ", "CREATE INDEX "):
            if statement.startswith(head):
                out.append(head + f"{schema}." + statement[len(head) :])
    return out


def index_definitions(table: str, schema: str) -> list[str]:
    """The CREATE INDEX statements of `table`, for a table of that shape in `schema`."""
    return [
        d for d in definitions(schema) if d.startswith("CREATE INDEX ") and f" ON {table} (" in d
    ]


# Writing: the file must stay readable after a kill at any point (WAL keeps every committed batch;
# synchronous=NORMAL loses at most the last batches on power loss, never on a process kill).
# Checkpoints are left to a background thread (checkpoint.py), not run inside commits.
WRITER_PRAGMAS: Final = (
    "PRAGMA page_size=8192",
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA wal_autocheckpoint=0",
    "PRAGMA cache_size=-65536",
    "PRAGMA temp_store=MEMORY",
)

SQLITE_MAGIC: Final = b"SQLite format 3\x00"

_I64_END: Final = 2**63
_U64_END: Final = 2**64


def to_sql_int(value: int) -> int | None:
    """u64 values past SQLite's i64 are stored as their two's complement; larger ones as NULL."""
    if -_I64_END <= value < _I64_END:
        return value
    return value - _U64_END if _I64_END <= value < _U64_END else None


def storable(value: Any) -> Any:
    """A value as SQLite (and the journal's msgpack) can hold it: integers by to_sql_int, text
    made valid UTF-8; anything else as it is."""
    if type(value) is int:
        return to_sql_int(value)
    if type(value) is str:
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


def from_sql_id(value: int) -> int:
    """An ID column back as the layer's u64 (see to_sql_int)."""
    return value + _U64_END if value < 0 else value
