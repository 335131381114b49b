"""Device runs folded into bench/results/device.json and docs/bench/device.md (`checks.py
--merge`): a check's latest run wins, a check run in parts joins its rounds, and a later commit's
run of some checks goes over the file's own with `--over`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.device import floor_check, workload_check
from bench.device.device_render import render
from bench.resultfile import DOCS_DIR, results_path, write, write_doc

NAME = "device"
DOC = DOCS_DIR / "device.md"


def merge(files: Sequence[Path], order: Sequence[str], over: bool = False) -> int:
    """Folds device runs (each with some of the checks) into bench/results/device.json: a
    check's latest run wins. The runs must come from one commit; a results file already there
    from that commit is folded in first, one from another commit is replaced, or with `over`
    kept: the runs' checks replace its own, each stamped with the commit and date it ran at
    (`ran_at`), and the file keeps its commit for the rest. `order`: every check's name, in the
    order they run (checks.CHECKS)."""
    runs = join_parts([json.loads(f.read_text()) for f in files])
    commits = {r.get("commit") for r in runs}
    if len(commits) > 1:
        raise SystemExit(f"device runs of different commits: {sorted(map(str, commits))}")
    target = results_path(NAME)
    previous = json.loads(target.read_text()) if target.exists() else None
    if over and previous and previous.get("commit") not in commits:
        return merge_over(previous, runs, target, order)
    if previous and previous.get("commit") in commits:
        runs.insert(0, previous)
    merged = runs[0]
    for r in runs[1:]:
        merged = {**r, "checks": {**merged["checks"], **r["checks"]}}
    # The per-workload costs of other devices stay (workload_check.py).
    workload_check.fold(previous, merged, merged.get("commit"), merged["date"])
    workload_check.fold(previous, merged, merged.get("commit"), merged["date"], floor_check.NAME)
    merged["settings"] = {
        "quick": any(r["settings"]["quick"] for r in runs),
        "checks": [name for name in order if name in merged["checks"]],
    }
    write(merged, target)
    write_doc(render(merged), DOC)
    print(f"wrote {target} and {DOC}")
    return 0


def join_parts(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One check run in parts (`--rounds`, one device call each, the device's limit on a call
    being shorter than all its rounds) is joined: the later parts' rounds follow the first's, in
    the first run given that holds it; the check's seconds add up, its failures too. Only a check
    whose every part keeps its rounds as lists by configuration joins; any other named twice
    keeps its latest run, as always."""
    out = [dict(r, checks=dict(r["checks"])) for r in runs]
    first: dict[str, dict[str, Any]] = {}
    for r in out:
        for name, part in list(r["checks"].items()):
            rounds = part.get("rounds")
            joinable = isinstance(rounds, dict) and all(
                isinstance(v, list) for v in rounds.values()
            )
            if not joinable:
                continue
            if name not in first:
                first[name] = part
                continue
            whole = first[name]
            if set(whole["rounds"]) != set(rounds):
                raise SystemExit(f"{name}: parts with different configurations")
            if whole.get("cpus") != part.get("cpus"):
                raise SystemExit(f"{name}: parts pinned to different CPUs")
            for key, runs_of_key in rounds.items():
                for run in runs_of_key:
                    run.pop("trace", None)  # every frame's record: the first part's first round
                whole["rounds"][key] = [*whole["rounds"][key], *runs_of_key]
            whole["seconds"] = whole.get("seconds", 0) + part.get("seconds", 0)
            whole["failures"] = [*whole.get("failures", []), *part.get("failures", [])]
            if part.get("status") == "failed":
                whole["status"] = "failed"
            del r["checks"][name]
    return out


def merge_over(
    previous: dict[str, Any], runs: Sequence[dict[str, Any]], target: Path, order: Sequence[str]
) -> int:
    merged = previous
    for r in runs:
        if not r.get("clean"):
            raise SystemExit(f"a run from a tree with uncommitted changes: {r.get('commit')}")
        for name, part in r["checks"].items():
            before = {"checks": {name: merged["checks"].get(name) or {}}}
            merged["checks"][name] = {**part, "ran_at": {"commit": r["commit"], "date": r["date"]}}
            # A check kept per device: this run's blocks stamped with its commit, the other
            # devices' kept.
            if name in (workload_check.NAME, floor_check.NAME):
                workload_check.fold(before, merged, r["commit"], r["date"], name)
    merged["settings"]["checks"] = [name for name in order if name in merged["checks"]]
    write(merged, target)
    write_doc(render(merged), DOC)
    print(f"wrote {target} and {DOC}")
    return 0
