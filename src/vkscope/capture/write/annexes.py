"""Workload instances from the journal's SUBMITs, with every ANNEX merged into its instance.

Instances are built a chunk at a time: their rows wait in memory until the chunk is inserted, so
that the annexes of the chunk merge into them there. An annex may name an instance of the chunk
(merged in memory), one already inserted (merged in the table with an UPDATE when the chunk is
inserted), or one of a SUBMIT further on in the journal (kept until that SUBMIT is built): an
ANNEX may come before or after its SUBMIT, even long after. Fields are applied in arrival order,
so the last annex to set a field wins, as the protocol says. The timing fields go to their own
columns rather than into the annex JSON (timing_fields.py), and merge the same way.

An annex names its instance by (submitID, tagID). The SUBMIT is the last one with that submitID
(from that process) received before the annex, or, if there was none, the first one after it;
the instance is the first the SUBMIT lists with that tagID.
"""

from __future__ import annotations

import sqlite3
from itertools import repeat
from typing import Any, Final, Protocol

import msgspec

from ...protocol import ANNEX
from ..schema import to_sql_int
from .journal import AnnexEntry, SubmitEntry
from .timing_fields import NO_TIMING, TIMING_COLUMNS, only_timing, take_timing, timing_fields
from .workload_rows import insert_rows

MAX_WAITING: Final = 100_000  # annexes waiting for a SUBMIT further on; past this one is dropped
_RESOLVED_CACHE: Final = 4096


class Note(Protocol):
    """Records a diagnostic about the connection `conn_id` (processes.id)."""

    def __call__(
        self,
        conn_id: int | None,
        kind: str,
        reason: str,
        offset: int | None = ...,
        message_type: int | None = ...,
        excerpt: bytes = ...,
    ) -> None: ...


# (connection id, tagID, fields, stream offset of the ANNEX frame)
Annex = tuple[int, int, dict[str, Any], int]
Submit = tuple[int, int, int]  # (submits.id, first instance id, instance count)

_INSTANCE: Final = "id, process, submit_row, submit_id, tag_id, ordinal, label_stack_id"
_COUNTER_KEYS: Final = frozenset(("counters", "counters_reason"))
_decode_annex = msgspec.json.Decoder(dict[str, Any]).decode
_decode_annexes = msgspec.json.Decoder(list[dict[str, Any]]).decode
_encode = msgspec.json.encode


def merge_annex(into: dict[str, Any], fields: dict[str, Any]) -> None:
    """Merges one ANNEX's fields into an instance's, in arrival order. Counter sources (pipeline
    statistics, samplers) each send their own `counters`: their values add up rather than the
    later replacing the earlier, and no source's null hides another's values."""
    earlier = into.get("counters")
    later = fields.get("counters")
    into.update(fields)
    if isinstance(earlier, dict) and later is None and "counters" in fields:
        into["counters"] = earlier
    elif isinstance(earlier, dict) and isinstance(later, dict):
        into["counters"] = {**earlier, **later}


class _Submits:
    """Finds the SUBMIT an annex names, in the submits table (built from the journal's submit rows
    before any annex is merged, so it lists every one the journal does)."""

    def __init__(self, db: sqlite3.Connection, schema: str) -> None:
        self._db = db
        self._sql = (
            f"SELECT id, first_instance, instance_count FROM {schema}.submits "
            "WHERE process = ? AND submit_id = ? ORDER BY id"
        )
        self._cache: dict[tuple[int, int], list[Submit]] = {}

    def find(self, process: int, submit_id: int, before: int) -> Submit | None:
        key = (process, submit_id)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= _RESOLVED_CACHE:
                self._cache.clear()
            found = self._db.execute(self._sql, (process, to_sql_int(submit_id))).fetchall()
            self._cache[key] = found
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        earlier = [s for s in found if s[0] <= before]
        return earlier[-1] if earlier else found[0]


class InstanceMerger:
    """Builds instance rows into the workload_instances table of `target`."""

    def __init__(self, db: sqlite3.Connection, target: str, note: Note, *, final: bool) -> None:
        self._db = db
        self._target = target
        self._note = note
        self._final = final  # the whole journal is here: a SUBMIT not found never arrived
        self._submits = _Submits(db, target)
        table = f"{target}.workload_instances"
        self._sql_plain = f"INSERT INTO {table} ({_INSTANCE}) VALUES (?,?,?,?,?,?,?)"
        self._sql_annexed = f"INSERT INTO {table} ({_INSTANCE}, annex) VALUES (?,?,?,?,?,?,?,?)"
        self._sql_timed = f"INSERT INTO {table} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
        self._sql_annex_row = f"INSERT INTO {target}.annexes VALUES (NULL,?,?,?,?)"
        self._sql_of_submit = (
            f"SELECT id, tag_id, annex, {TIMING_COLUMNS} FROM {table} "
            "WHERE id >= ? AND id < ? ORDER BY id"
        )
        self._sql_update = (
            f"UPDATE {table} SET annex = ?, gpu_begin_ns = ?, gpu_end_ns = ?, timing = ?, "
            "timing_reason = ?, serialization = ? WHERE id = ?"
        )
        self._sql_built = f"SELECT 1 FROM {table} WHERE id = ?"
        self._rows: list[tuple[Any, ...] | None] = []  # the chunk's instance rows
        self._in_chunk: dict[int, tuple[int, int]] = {}  # submit row -> (index in _rows, count)
        self._chunk_keys: dict[tuple[int, int], list[Submit]] = {}  # (process, submitID) ->
        self._tag_rows: dict[int, dict[int, int]] = {}  # submit row -> tagID -> index
        self._merged: dict[int, dict[str, Any]] = {}  # index in _rows -> fields merged so far
        # Annexes for instances already inserted, with their SUBMIT's submitID.
        self._in_file: dict[Submit, tuple[int, list[Annex]]] = {}
        self._waiting: dict[int, list[Annex]] = {}  # submit row not built yet -> its annexes
        self._waiting_count = 0
        self._annex_rows: list[tuple[Any, ...]] = []  # for the annexes table

    def __len__(self) -> int:
        """Instance rows and annexes waiting to be written."""
        return len(self._rows) + len(self._annex_rows)

    # -- from the journal -------------------------------------------------------------------

    def submits(self, process: int, entries: list[SubmitEntry]) -> None:
        rows = self._rows
        for row, first, submit_id, listed in entries:
            n = len(listed)
            start = len(rows)
            tags, stacks = zip(*listed, strict=True)
            same = repeat(process), repeat(row), repeat(to_sql_int(submit_id))
            rows.extend(zip(range(first, first + n), *same, tags, range(n), stacks, strict=False))
            self._in_chunk[row] = (start, n)
            self._chunk_keys.setdefault((process, submit_id), []).append((row, first, n))
            early = self._waiting.pop(row, None)
            if early is not None:
                self._waiting_count -= len(early)
                for annex in early:
                    self._merge_in_chunk((row, first, n), submit_id, annex)

    def annexes(self, conn_id: int, process: int, entries: list[AnnexEntry]) -> None:
        for (submit_id, tag, offset, payload, before), fields in zip(
            entries, self._decode(conn_id, entries), strict=True
        ):
            if fields is None:
                continue
            # Timing alone says nothing its instance's columns do not; counters alone nothing its
            # merged annex does not.
            if not only_timing(fields) and not (fields.keys() <= _COUNTER_KEYS):
                text = payload.decode("utf-8", "replace")
                self._annex_rows.append((process, to_sql_int(submit_id), to_sql_int(tag), text))
            annex = (conn_id, tag, fields, offset)
            # Mostly its SUBMIT is among the chunk's, newer than any in the table: no query.
            candidates = self._chunk_keys.get((process, submit_id))
            if candidates and candidates[0][0] <= before:
                submit: Submit | None = [c for c in candidates if c[0] <= before][-1]
            else:
                submit = self._submits.find(process, submit_id, before)
            if submit is None:
                if self._final:
                    reason = f"ANNEX for submit {submit_id} tagID {tag}: that SUBMIT never arrived"
                    self._note(conn_id, "annex_unmatched", reason, offset, ANNEX)
            elif submit[0] in self._in_chunk:
                self._merge_in_chunk(submit, submit_id, annex)
            elif submit[2] == 0 or self._db.execute(self._sql_built, (submit[1],)).fetchone():
                self._in_file.setdefault(submit, (submit_id, []))[1].append(annex)
            else:
                self._wait(submit[0], annex)

    def _decode(self, conn_id: int, entries: list[AnnexEntry]) -> list[dict[str, Any] | None]:
        """The payloads decoded in one call (each was checked on arrival: one by one, to say
        which, only for a damaged file)."""
        payloads = [e[3] for e in entries]
        try:
            decoded = _decode_annexes(b"[" + b",".join(payloads) + b"]")
            if len(decoded) == len(payloads):
                return decoded  # type: ignore[return-value]
        except (msgspec.DecodeError, ValueError):
            pass
        out: list[dict[str, Any] | None] = []
        for _, _, offset, payload, _ in entries:
            try:
                out.append(_decode_annex(payload))
            except (msgspec.DecodeError, ValueError) as exc:
                reason = f"ANNEX payload cannot be read back: {exc}"
                self._note(conn_id, "invalid_payload", reason, offset, ANNEX)
                out.append(None)
        return out

    def _wait(self, row: int, annex: Annex) -> None:
        if self._waiting_count >= MAX_WAITING:
            reason = (
                f"over {MAX_WAITING} annexes wait for SUBMITs further on in the capture; "
                "this one is not applied"
            )
            self._note(annex[0], "annex_unmatched", reason, annex[3], ANNEX)
            return
        self._waiting.setdefault(row, []).append(annex)
        self._waiting_count += 1

    def _merge_in_chunk(self, submit: Submit, submit_id: int, annex: Annex) -> None:
        row = submit[0]
        tags = self._tag_rows.get(row)
        if tags is None:
            start, count = self._in_chunk[row]
            rows = self._rows
            # Built backwards so that a tag listed twice resolves to its first listing.
            tags = {rows[i][4]: i for i in range(start + count - 1, start - 1, -1)}  # type: ignore[index]
            self._tag_rows[row] = tags
        index = tags.get(annex[1])
        if index is None:
            self._unmatched(submit_id, annex)
        else:
            merge_annex(self._merged.setdefault(index, {}), annex[2])

    def _unmatched(self, submit_id: int, annex: Annex) -> None:
        conn_id, tag, _, offset = annex
        reason = f"ANNEX names tagID {tag}, which SUBMIT {submit_id} does not list; not applied"
        self._note(conn_id, "annex_unmatched", reason, offset, ANNEX)

    # -- writing ----------------------------------------------------------------------------

    def flush(self) -> None:
        """Inserts the chunk's instances and annexes, and merges annexes into earlier ones."""
        db, rows = self._db, self._rows
        annexed, timed = [], []
        for index, fields in self._merged.items():
            timing = take_timing(fields)
            text = _encode(fields).decode() if fields else None
            if timing == NO_TIMING:
                annexed.append((*rows[index], text))  # type: ignore[misc]
            else:
                timed.append((*rows[index], text, *timing))  # type: ignore[misc]
            rows[index] = None
        if self._merged:
            rows = [r for r in rows if r is not None]
        for sql, batch in (
            (self._sql_plain, rows),
            (self._sql_annexed, annexed),
            (self._sql_timed, timed),
            (self._sql_annex_row, self._annex_rows),
        ):
            if batch:
                insert_rows(db, sql, batch)  # type: ignore[arg-type]
        for submit, (submit_id, annexes) in self._in_file.items():
            self._merge_in_file(submit, submit_id, annexes)
        self._rows = []
        self._annex_rows = []
        self._in_chunk.clear()
        self._chunk_keys.clear()
        self._tag_rows.clear()
        self._merged.clear()
        self._in_file.clear()

    def _merge_in_file(self, submit: Submit, submit_id: int, annexes: list[Annex]) -> None:
        # One query for the submit's instances, however many annexes name them: with timing
        # on, every instance gets an annex, mostly after its submit was built.
        db = self._db
        first, count = submit[1], submit[2]
        found = db.execute(self._sql_of_submit, (first, first + count)).fetchall()
        by_tag = {r[1]: r for r in reversed(found)}  # a tag listed twice: its first listing
        merged: dict[int, dict[str, Any]] = {}
        for annex in annexes:
            hit = by_tag.get(to_sql_int(annex[1]))
            if hit is None:
                self._unmatched(submit_id, annex)
                continue
            fields = merged.get(hit[0])
            if fields is None:
                fields = msgspec.json.decode(hit[2]) if hit[2] else {}
                fields.update(timing_fields(hit[3:]))
                merged[hit[0]] = fields
            merge_annex(fields, annex[2])
        updates = []
        for row_id, fields in merged.items():
            timing = take_timing(fields)
            updates.append((_encode(fields).decode() if fields else None, *timing, row_id))
        db.executemany(self._sql_update, updates)

    def finish(self) -> None:
        """At the end of the journal: what still waits names a SUBMIT that was never built."""
        self.flush()
        for annexes in self._waiting.values():
            for conn_id, tag, _, offset in annexes:
                if self._final:
                    reason = f"ANNEX for tagID {tag}: its SUBMIT's workloads never arrived"
                    self._note(conn_id, "annex_unmatched", reason, offset, ANNEX)
        self._waiting.clear()
        self._waiting_count = 0
