"""`vkscope run` captures into a file that `vkscope report` and the Python API read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture


def vkscope(*args: str | Path, cwd: Path) -> tuple[int, str, str]:
    res = run([vkscope_cli(), *args], base_env(), cwd=cwd)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.vulkan
def test_run_writes_a_capture_that_report_reads(workload: Path, tmp_path: Path) -> None:
    cap = tmp_path / "compute.vkscope"
    code, out, err = vkscope(
        "run", "-o", cap, "--", workload, "--scenario", "compute", cwd=tmp_path
    )
    assert code == 0, err
    assert f"capture {cap} (complete)" in err
    # The defaults: a report summary, a Perfetto trace and an HTML page next to the capture.
    assert "Queues over 1 frame" in out
    for suffix in (".pftrace", ".html"):
        assert cap.with_suffix(suffix).stat().st_size > 0
        assert f"vkscope: wrote {cap.with_suffix(suffix)}" in out
    with open_capture(cap) as capture:
        kinds = [w.type for w in capture.workloads()]
    assert kinds.count("dispatch") == 5
    code, out, err = vkscope("report", cap, "--all", cwd=tmp_path)
    assert code == 0, err
    assert "dispatch" in out and "256x1x1 groups" in out


def test_existing_capture_is_not_overwritten(workload: Path, tmp_path: Path) -> None:
    cap = tmp_path / "taken.vkscope"
    cap.write_text("precious")
    code, _, err = vkscope("run", "-o", cap, "--", workload, "--scenario", "compute", cwd=tmp_path)
    assert code == 2 and "already exists" in err
    assert cap.read_text() == "precious"


@pytest.mark.vulkan
def test_default_capture_name_and_no_capture(workload: Path, tmp_path: Path) -> None:
    code, _, err = vkscope("run", "--", workload, "--scenario", "buffer_transfer", cwd=tmp_path)
    assert code == 0, err
    assert len(list(tmp_path.glob("vkscope-workload-*.vkscope"))) == 1
    other = tmp_path / "other"
    other.mkdir()
    code, _, _ = vkscope("run", "--no-capture", "--", workload, "--scenario", "compute", cwd=other)
    assert code == 0
    assert list(other.iterdir()) == []
    cmd = ["run", "-o", "only.vkscope", "--no-trace", "--no-html", "--no-report", "--"]
    code, out, _ = vkscope(*cmd, workload, "--scenario", "compute", cwd=other)
    assert code == 0
    assert [p.name for p in other.iterdir()] == ["only.vkscope"]
    assert "Queues over" not in out


@pytest.mark.vulkan
def test_application_killed_mid_capture_leaves_a_valid_capture(
    workload: Path, tmp_path: Path
) -> None:
    cap = tmp_path / "crash.vkscope"
    script = f"{workload} --all --frames 400 --quiet & pid=$!; sleep 1; kill -9 $pid; wait $pid"
    code, _, err = vkscope("run", "-o", cap, "--", "sh", "-c", script, cwd=tmp_path)
    assert code == 128 + 9, err
    assert f"capture {cap} (incomplete)" in err
    with open_capture(cap) as capture:
        assert capture.meta.status == "incomplete"
        assert sum(1 for _ in capture.workloads()) > 0


def test_report_of_bad_files_is_a_clear_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.vkscope"
    text.write_text("not a capture at all, just some words\n" * 20)
    empty = tmp_path / "empty.vkscope"
    empty.write_bytes(b"")
    for path in (text, empty, tmp_path / "missing.vkscope"):
        code, _, err = vkscope("report", path, cwd=tmp_path)
        assert code == 2, err
        assert str(path) in err and "Traceback" not in err


@pytest.mark.vulkan
def test_a_temp_folder_too_long_for_a_socket_path(workload: Path, tmp_path: Path) -> None:
    # vkscope run makes its socket in the temporary folder; past 107 bytes a Unix socket path
    # cannot be bound, so it listens in a short folder of its own and says why.
    tmpdir = tmp_path / ("t" * 80) / ("u" * 40)
    tmpdir.mkdir(parents=True)
    cap = tmp_path / "long.vkscope"
    env = {**base_env(), "TMPDIR": str(tmpdir)}
    cmd = [vkscope_cli(), "run", "-o", str(cap), "--no-trace", "--no-html", "--no-report", "--"]
    res = run([*cmd, str(workload), "--scenario", "compute"], env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "over the 107-byte limit of a Unix socket address" in res.stderr + res.stdout
    with open_capture(cap) as capture:
        assert capture.meta.status == "complete"
        assert [w.type for w in capture.workloads()].count("dispatch") == 5
