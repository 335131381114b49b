"""The HTML timeline's Python side: what goes into the page, and how the file is written.

Captures are made the way the layer makes them: protocol frames sent to a real CaptureServer.
test_html_browser.py loads the pages these captures give in headless Chromium.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from support.captures import capture_from
from support.html_scenes import (
    BASE_NS,
    BIG,
    device,
    identity_entry,
    timeline_stream,
)

from vkscope.capture import CaptureError, open_capture
from vkscope.capture.read.distributions import distributions
from vkscope.capture.write.client import Stream
from vkscope.html import build_page, page_data, write_html


@pytest.fixture
def timed_capture(tmp_path: Path) -> Path:
    return capture_from(tmp_path, timeline_stream(), name="timed.vkscope")


@pytest.fixture
def untimed_capture(tmp_path: Path) -> Path:
    return capture_from(tmp_path, timeline_stream(timed=False), name="untimed.vkscope")


def embedded_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="vkscope-data">(.*?)</script>', page,
                      re.DOTALL)  # fmt: skip
    assert found, "no data block in the page"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def decoded(data: dict[str, Any]) -> dict[str, Any]:
    """page_data's value as the page sees it (metadata arrives as encoded JSON)."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(data))
    return out


def expected_times(path: Path) -> list[tuple[int, int | None, int | None]]:
    """(id, begin, end) of every instance, as the capture says, in submission order."""
    with open_capture(path) as cap:
        return [(w.id, w.gpu_begin_ns, w.gpu_end_ns) for w in cap.workloads()]


def test_columns_hold_every_instance(timed_capture: Path) -> None:
    with open_capture(timed_capture) as cap:
        data = decoded(page_data(cap))
        instances = list(cap.workloads())
    w = data["workloads"]
    assert w["count"] == len(instances) == 3 * 11
    assert w["id"] == [i.id for i in instances]
    assert w["key"] == [f"{i.submit_id}.{i.tag_id}" for i in instances]
    assert [data["types"][t] for t in w["t"]] == [i.type for i in instances]
    assert [tuple(data["labels"][s]) for s in w["l"]] == [i.labels for i in instances]
    assert [data["frames"][f]["number"] for f in w["f"]] == [i.frame for i in instances]
    assert [data["queues"][q]["queue"] for q in w["q"]] == [i.queue for i in instances]
    assert [q["name"] for q in data["queues"]] == ["queue 0", "queue 1"]
    assert data["queues"][0]["flags"] == ["graphics", "compute", "transfer"]
    metadata = [data["metadata"][m] for m in w["m"]]
    for md, inst in zip(metadata, instances, strict=True):
        assert md == {k: (str(v) if v == BIG else v) for k, v in inst.metadata.items()}


def test_times_are_relative_and_exact(timed_capture: Path) -> None:
    with open_capture(timed_capture) as cap:
        data = decoded(page_data(cap))
    w = data["workloads"]
    times = expected_times(timed_capture)
    first = min(b for _, b, _ in times if b is not None)
    assert first == BASE_NS + 5_000
    for k, (_, begin, end) in enumerate(times):
        if begin is None or end is None:
            assert w["b"][k] is None and w["e"][k] is None
        else:
            assert (w["b"][k], w["e"][k]) == (begin - first, end - first)
    timing = data["timing"]
    assert timing["timed"] == 32 and timing["untimed"] == 1
    assert timing["untimed_reasons"] == {"recorded outside a captured frame": 1}
    states = [timing["states"][t] for t in w["ti"]]
    assert states.count(["ok", None, "queue"]) == 32
    assert states.count(["untimed", "recorded outside a captured frame", "none"]) == 1
    assert timing["per_device_clocks"] is False
    assert w["s"][0] == 0 and all(isinstance(s, int) for s in w["s"])
    assert w["sc"][0] == 3_000_000  # SUBMIT_DONE, relative to the first submit too
    assert [f["captured"] for f in data["frames"]] == [True, True, True]


def test_untimed_capture_has_no_times(untimed_capture: Path) -> None:
    with open_capture(untimed_capture) as cap:
        data = decoded(page_data(cap))
    assert data["timing"]["timed"] == 0
    assert data["timing"]["untimed"] == data["workloads"]["count"] == 33
    assert set(data["workloads"]["b"]) == {None}
    assert [f["captured"] for f in data["frames"]] == [None, None, None]
    # Metadata an instance shares with others (no annex, or the same one) is stored once.
    assert len(data["metadata"]) == 11


def test_enumerants_are_named(timed_capture: Path) -> None:
    with open_capture(timed_capture) as cap:
        data = decoded(page_data(cap))
    assert data["enums"]["format"] == {"37": "R8G8B8A8_UNORM", "126": "D32_SFLOAT"}
    assert data["enums"]["load"] == {"1": "CLEAR", "2": "DONT_CARE"}
    assert data["enums"]["store"] == {"0": "STORE", "1": "DONT_CARE"}


def test_page_is_one_file_with_nothing_outside(timed_capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    write_html(timed_capture, out)
    page = out.read_text(encoding="utf-8")
    # The label with "</script>" in it must not end the data block: only the two real closers.
    assert page.count("</script>") == 2
    assert "\\u003c/script>\\u003cb>x\\u003c/b>" in page
    assert "post </script><b>x</b>" in json.dumps(embedded_data(page)["labels"])
    for outside in ("src=", "href=", "url(", "@import", "http://", "https://", "//cdn"):
        assert outside not in page, f"the page refers to something outside it: {outside}"
    assert "default-src 'none'" in page  # and says so to the browser
    assert page.startswith("<!DOCTYPE html>")
    assert "{{" not in page.replace(json.dumps(embedded_data(page)), "")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_big_integers_keep_their_digits(timed_capture: Path) -> None:
    with open_capture(timed_capture) as cap:
        page = build_page(cap)
    magic = [m for m in embedded_data(page)["metadata"] if m.get("type") == "mesh_magic"]
    assert magic and all(m["big"] == str(BIG) for m in magic)
    assert all(m["factor"] == 7 for m in magic)


def test_bad_capture_writes_nothing(tmp_path: Path) -> None:
    junk = tmp_path / "junk.vkscope"
    junk.write_text("not a capture\n" * 100)
    out = tmp_path / "report.html"
    with pytest.raises(CaptureError, match="not a vkscope capture"):
        write_html(junk, out)
    with pytest.raises(CaptureError, match="no such file"):
        write_html(tmp_path / "missing.vkscope", out)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.vkscope"]


def test_existing_page_is_replaced_whole(timed_capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("old")
    write_html(timed_capture, out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_capture_without_workloads(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device(1)
    s.goodbye()
    path = capture_from(tmp_path, s, name="empty.vkscope")
    with open_capture(path) as cap:
        data = decoded(page_data(cap))
    assert data["workloads"]["count"] == 0 and data["frames"] == [] and data["queues"] == []


def two_device_stream(clock: str | None) -> Stream:
    s = Stream()
    s.hello()
    for dev, name, start in ((1, "GPU A", 7_000_000_000), (2, "GPU B", 90_000_000_000)):
        device(s, dev, name, clock, queues=1)
        s.workload(dev * 10, "dispatch", device=dev, groups=[1, 1, 1], invocations=64)
        submit = s.submit([(dev * 10, 0)], device=dev, cpu_ns=dev)
        s.annex(submit, dev * 10, gpu_begin_ns=start, gpu_end_ns=start + 1000, timing="ok")
    s.goodbye()
    return s


def test_clocks_of_several_devices(tmp_path: Path) -> None:
    own = capture_from(tmp_path, two_device_stream(None), name="own.vkscope")
    with open_capture(own) as cap:
        data = decoded(page_data(cap))
    # Clocks that cannot be compared: each device starts at 0.
    assert data["timing"]["per_device_clocks"] is True
    assert data["workloads"]["b"] == [0, 0] and data["workloads"]["e"] == [1000, 1000]
    assert [q["device_name"] for q in data["queues"]] == ["GPU A", "GPU B"]
    shared = capture_from(tmp_path, two_device_stream("clock_monotonic"), name="shared.vkscope")
    with open_capture(shared) as cap:
        data = decoded(page_data(cap))
    assert data["timing"]["per_device_clocks"] is False
    assert data["workloads"]["b"] == [0, 83_000_000_000]
    assert [d["clock_domain"] for d in data["capture"]["devices"]] == ["clock_monotonic"] * 2


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_each_identity_has_its_distribution_over_steady_frames(timed_capture: Path) -> None:
    with open_capture(timed_capture) as cap:
        data = decoded(page_data(cap))
        instances = list(cap.workloads())
        expected = {d.identity: d for d in distributions(cap)}
    # Frame 0 is the warm-up frame the rule leaves out.
    assert [f["warmup"] for f in data["frames"]] == ["first frame", None, None]
    assert data["warmup"]["said"] == "1 frame left out (0: first frame)"
    for w, ix in zip(instances, data["workloads"]["ix"], strict=True):
        entry = identity_entry(data, ix)
        assert w.identity is not None
        assert (entry["queue"], tuple(data["labels"][entry["l"]]), entry["type"],
                entry["ordinal"]) == (w.identity.queue, w.identity.labels, w.identity.type,
                                      w.identity.ordinal)  # fmt: skip
        d = expected[w.identity]
        assert entry["frames"] == d.frames == 2
        g = d.gpu_ns
        assert entry["gpu"] == (None if g is None else [g.count, g.min, g.p50, g.p90, g.p99, g.max])
