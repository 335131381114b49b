"""`vkscope export --parquet`: real lavapipe captures (the workload program under `vkscope
run`) into a dataset, incrementally; a damaged capture in the folder is reported and skipped,
never half-written; tags with odd characters arrive as they were given."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.cli import main
from vkscope.cli.demo import SUBMITS_PER_FRAME

ODD = "forêt 'night' \"v2\" / = % ; \\ 雪"
pytestmark = pytest.mark.vulkan


def _capture(folder: Path, workload: Path, build: int) -> Path:
    path = folder / f"game-{build}.vkscope"
    res = run(
        [vkscope_cli(), "run", "--no-report", "--no-trace", "--no-html", "--timing", "queue",
         "-s", f"frame_submits={SUBMITS_PER_FRAME}", "-o", path, "--tag", f"build={build}",
         "--tag", f"scene={ODD}", "--",
         workload, "--scenario", "game", "--frames", "4", "--quiet"],
        base_env(), cwd=folder,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return path


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory, workload: Path) -> list[Path]:
    folder = tmp_path_factory.mktemp("captures")
    return [_capture(folder, workload, build) for build in (1, 2, 3)]


def _query(dataset: Path, sql: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["fleet", "query", str(dataset), sql, "--format", "json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def test_export_of_real_captures(
    tmp_path: Path, captures: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "ds"
    assert main(["export", "--parquet", str(dataset), str(captures[0].parent)]) == 0
    assert "3 captures added" in capsys.readouterr().err
    expected = 0
    for path in captures:
        with open_capture(path) as cap:
            expected += cap.workload_count()
            cid = cap.meta.capture_id
        rows = _query(
            dataset,
            f"SELECT tags['build'] AS build, tags['scene'] AS scene, instances, frames, device "
            f"FROM captures WHERE capture_id = '{cid}'",
            capsys,
        )
        assert len(rows) == 1 and rows[0]["scene"] == ODD and rows[0]["instances"]
        assert "llvmpipe" in str(rows[0]["device"])
    sql = "SELECT count(*) AS n, count(gpu_ns) AS timed FROM instances"
    (total,) = _query(dataset, sql, capsys)
    assert total["n"] == expected and total["timed"] == expected
    # One identity per pass: the same in every frame of every capture.
    rows = _query(
        dataset,
        "SELECT identity, count(*) AS n, count(DISTINCT capture_id) AS captures FROM instances "
        "WHERE label_path LIKE '%GBuffer%' GROUP BY identity ORDER BY identity",
        capsys,
    )
    assert rows and all(r["captures"] == 3 for r in rows)
    assert all(str(r["identity"]).startswith("renderpass Frame/GBuffer") for r in rows)
    (frames,) = _query(
        dataset, "SELECT sum(instances) AS n, count(*) AS frames FROM frames", capsys
    )
    assert frames["n"] == expected and frames["frames"] >= 12
    # The analyses run on it: three builds are too few runs to judge, so nothing is found.
    assert main(["trend", str(dataset), "--by", "build", "--group", "scene", "--gate"]) == 0


def test_export_is_incremental(
    tmp_path: Path, captures: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "ds"
    assert main(["export", "--parquet", str(dataset), str(captures[0])]) == 0
    assert main(["export", "--parquet", str(dataset), *map(str, captures)]) == 0
    assert "2 captures added" in capsys.readouterr().err.splitlines()[-1]
    before = sorted(p.stat().st_mtime_ns for p in dataset.rglob("*.parquet"))
    assert main(["export", "--parquet", str(dataset), str(captures[0].parent)]) == 0
    assert "0 captures added (0 workload instances), 3 there already" in capsys.readouterr().err
    assert sorted(p.stat().st_mtime_ns for p in dataset.rglob("*.parquet")) == before


def test_a_damaged_capture_is_reported_and_skipped(
    tmp_path: Path, captures: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "nightly"
    folder.mkdir()
    for path in captures[:2]:
        shutil.copy(path, folder)
    data = captures[2].read_bytes()
    (folder / "truncated.vkscope").write_bytes(data[: len(data) // 2])
    (folder / "junk.vkscope").write_text("not a capture")
    dataset = tmp_path / "ds"
    assert main(["export", "--parquet", str(dataset), str(folder)]) == 2
    err = capsys.readouterr().err
    assert "truncated.vkscope: skipped: " in err and "junk.vkscope: skipped: " in err
    assert "2 captures added" in err and "2 damaged and skipped" in err and "Traceback" not in err
    for table in ("captures", "frames", "instances"):
        assert len(list((dataset / table).glob("*/*.parquet"))) == 2
    assert not list(dataset.glob(".staging/*"))


def test_partitions_by_a_tag_with_odd_characters(
    tmp_path: Path, captures: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "ds"
    args = ["export", "--parquet", str(dataset), "--partition-by", "tag:scene"]
    assert main([*args, *map(str, captures)]) == 0
    (folder,) = (dataset / "instances").iterdir()
    assert folder.name.isascii() and "/" not in folder.name
    for path in folder.iterdir():
        assert set(pq.read_table(path, columns=["partition"]).column(0).to_pylist()) == {ODD}
    assert _query(dataset, "SELECT DISTINCT partition FROM captures", capsys) == [
        {"partition": ODD}
    ]
    # A dataset keeps the key it was made with.
    assert main(["export", "--parquet", str(dataset), str(captures[0])]) == 2
    assert "is partitioned by tag:scene, not date" in capsys.readouterr().err


def test_nothing_to_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["export", "--parquet", str(tmp_path / "ds"), str(tmp_path / "empty")]) == 2
    assert "no captures in" in capsys.readouterr().err
