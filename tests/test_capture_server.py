"""The capture server over real sockets, into real SQLite files, read back with open_capture."""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vkscope import protocol as m
from vkscope.capture import CaptureServer, CaptureServerError, Counters, open_capture
from vkscope.capture.write.client import Stream, connect
from vkscope.capture.write.wire import MAX_PAYLOAD, encode_frame


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CaptureServer]:
    srv = CaptureServer(tmp_path / "cap.vkscope", [f"unix:{tmp_path / 's.sock'}"])
    srv.start()
    yield srv
    if srv._summary is None:
        srv.stop()


def wait_for(server: CaptureServer, done: Callable[[Counters], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not done(server.counters()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; counters: {server.counters()}")
        time.sleep(0.01)


def send(server: CaptureServer, data: bytes, *, address: int = 0) -> None:
    with connect(server.addresses[address]) as sock:
        sock.sendall(data)


def closed(n: int) -> Callable[[Counters], bool]:
    return lambda c: c.connections >= n and c.open_connections == 0


def test_round_trip(server: CaptureServer) -> None:
    s = Stream()
    s.hello(process="game", pid=4321)
    s.device(1, "Test GPU", queues=2)
    s.labels(1, ["frame", "shadows"])
    s.labels(2, ["frame", "lighting", "tiles"])
    attachments = [
        {"index": 0, "kind": "color", "format": "R8G8B8A8_UNORM", "samples": 1,
         "load": "clear", "store": "store", "resolve": False},
        {"index": 1, "kind": "depth", "format": "D32_SFLOAT", "samples": 1,
         "load": "clear", "store": "dont_care", "resolve": False},
    ]  # fmt: skip
    s.workload(10, "renderpass", api="vkCmdBeginRenderPass2", width=1920, height=1080,
               layers=1, draws=12, attachments=attachments)  # fmt: skip
    s.workload(11, "dispatch", api="vkCmdDispatchIndirect", groups=None, local_size=[8, 8, 1],
               invocations=None)  # fmt: skip
    s.workload(12, "buffer_transfer", api="vkCmdCopyBuffer", kind="copy", bytes=4096)
    s.workload(13, "image_transfer", api="vkCmdBlitImage", kind="blit", pixels=100)
    s.annex(2, 11, groups=[4, 4, 1], invocations=1024)  # before its SUBMIT
    s.submit([(10, 1), (12, 0)], frame=0, queue=0, cpu_ns=100, submit_id=1)
    s.submit([(11, 2), (13, 1)], frame=0, queue=1, cpu_ns=200, submit_id=2)
    s.annex(1, 10, draws=14)  # after its SUBMIT
    s.frame(0, cpu_ns=300)
    s.submit([(10, 1)], frame=1, queue=0, cpu_ns=400, submit_id=3)
    s.annex(3, 10, draws=3, note="first")
    s.annex(3, 10, draws=4)  # the later annex wins
    s.dropped(5)
    s.frame(1, cpu_ns=500)
    s.goodbye(dropped=5)
    send(server, s.data())
    wait_for(server, closed(1))
    summary = server.stop()
    assert summary.status == "complete"
    assert summary.counters.workloads == 4 and summary.counters.instances == 5

    with open_capture(summary.path) as cap:
        assert cap.meta.status == "complete"
        assert (cap.meta.process_name, cap.meta.pid, cap.meta.protocol_version) == ("game", 4321, 1)
        assert (cap.meta.messages, cap.meta.bad_messages, cap.meta.dropped) == (len(s.frames), 0, 5)
        assert [d.name for d in cap.devices()] == ["Test GPU"]
        assert [(q.id, q.flags[0]) for q in cap.queues()] == [(0, "graphics"), (1, "graphics")]
        assert [(f.number, f.cpu_ns, f.reason) for f in cap.frames()] == [
            (0, 300, "present"),
            (1, 500, "present"),
        ]
        rows = list(cap.workloads())
        assert [(w.submit_id, w.tag_id, w.ordinal) for w in rows] == [
            (1, 10, 0), (1, 12, 1), (2, 11, 0), (2, 13, 1), (3, 10, 0),
        ]  # fmt: skip
        assert [w.type for w in rows] == [
            "renderpass", "buffer_transfer", "dispatch", "image_transfer", "renderpass",
        ]  # fmt: skip
        assert [w.label_path for w in rows] == [
            "frame/shadows", "", "frame/lighting/tiles", "frame/shadows", "frame/shadows",
        ]  # fmt: skip
        assert rows[2].labels == ("frame", "lighting", "tiles")
        assert [(w.frame, w.queue) for w in rows] == [(0, 0), (0, 0), (0, 1), (0, 1), (1, 0)]
        assert rows[0].metadata["draws"] == 14 and rows[0].metadata["width"] == 1920
        assert len(rows[0].metadata["attachments"]) == 2
        assert rows[2].metadata["groups"] == [4, 4, 1]
        assert rows[2].metadata["invocations"] == 1024
        assert rows[2].metadata["local_size"] == [8, 8, 1]
        assert rows[4].metadata["draws"] == 4 and rows[4].metadata["note"] == "first"
        assert rows[1].metadata["bytes"] == 4096 and rows[3].metadata["pixels"] == 100
        assert rows[4].submit_cpu_ns == 400 and rows[4].gpu_begin_ns is None
        assert [w.tag_id for w in cap.workloads(frame=0, queue=1)] == [11, 13]
        assert [w.submit_id for w in cap.workloads(type="renderpass")] == [1, 3]
        assert list(cap.workloads(frame=7)) == []
        assert cap.diagnostics() == []
        (proc,) = cap.processes()
        assert (proc.name, proc.state, proc.dropped) == ("game", "goodbye", 5)
        sql = "SELECT draws, width, groups_x, invocations FROM workloads ORDER BY tag_id"
        assert list(cap._rows(sql)) == [
            (12, 1920, None, None), (None, None, None, None), (None, None, None, None),
            (None, None, None, None),
        ]  # fmt: skip


def test_disconnect_mid_frame_leaves_a_valid_incomplete_capture(server: CaptureServer) -> None:
    s = Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch", groups=[1, 1, 1])
    s.submit([(1, 0)], frame=0)
    whole = s.data()
    cut = encode_frame(m.SUBMIT, 0, {"device": 1, "queue": 0, "frame": 0, "workloads": []}, 9)
    send(server, whole + cut[: len(cut) // 2])
    wait_for(server, closed(1))
    summary = server.stop()
    assert summary.status == "incomplete"
    with open_capture(summary.path) as cap:
        assert cap.meta.status == "incomplete"
        assert [w.tag_id for w in cap.workloads()] == [1]
        (diag,) = cap.diagnostics()
        assert (diag.kind, diag.offset, diag.connection) == ("truncated", len(whole), 1)
        assert "stream ended inside a SUBMIT frame" in diag.reason
        assert diag.excerpt == cut[: len(cut) // 2][:32]
        assert cap.processes()[0].state == "disconnected"


def test_random_bytes_then_a_good_connection(server: CaptureServer) -> None:
    noise = random.Random(1234).randbytes(20000)
    send(server, noise)
    wait_for(server, closed(1))
    s = Stream()
    s.hello(process="child")
    s.device()
    s.workload(5, "buffer_transfer", kind="fill", bytes=64)
    s.submit([(5, 0)], frame=0)
    s.goodbye()
    send(server, s.data())
    wait_for(server, closed(2))
    summary = server.stop()
    assert summary.status == "incomplete"  # the noisy connection never said GOODBYE
    with open_capture(summary.path) as cap:
        noisy, good = cap.processes()
        assert noisy.state in ("out_of_step", "disconnected") and noisy.bad_messages >= 1
        assert (good.name, good.state, good.bad_messages) == ("child", "goodbye", 0)
        assert [(w.process, w.tag_id, w.metadata["bytes"]) for w in cap.workloads()] == [(2, 5, 64)]
        diags = cap.diagnostics()
        assert diags and {d.connection for d in diags} == {1}
        assert all(d.offset is not None and 0 <= d.offset < len(noise) for d in diags)


def test_unknown_types_are_skipped_and_bad_json_is_counted(server: CaptureServer) -> None:
    s = Stream()
    s.hello()
    s.add(0x30, 1, {"from": "the future"})
    s.add(0xB0, 2, {"also": "the future"}, sequence=99)
    s.add(m.WORKLOAD, 3, b'{"device": 1, "type": "dispatch", "api": ')  # malformed JSON
    s.add(m.WORKLOAD, 4, b'{"device": 1}')  # not what a WORKLOAD is
    s.workload(6, "dispatch", groups=[2, 2, 2])
    s.device()
    s.submit([(6, 0)])
    s.goodbye()
    send(server, s.data())
    wait_for(server, closed(1))
    summary = server.stop()
    assert summary.status == "complete"
    assert (summary.counters.skipped_messages, summary.counters.bad_messages) == (2, 2)
    with open_capture(summary.path) as cap:
        assert (cap.meta.skipped_messages, cap.meta.bad_messages) == (2, 2)
        assert [w.tag_id for w in cap.workloads()] == [6]
        kinds = [(d.kind, d.message_type) for d in cap.diagnostics()]
        assert kinds == [
            ("unknown_type", 0x30), ("unknown_type", 0xB0),
            ("malformed_json", m.WORKLOAD), ("invalid_payload", m.WORKLOAD),
        ]  # fmt: skip
        offsets = [d.offset for d in cap.diagnostics()]
        starts = [sum(len(f) for f in s.frames[:i]) for i in range(1, 5)]
        assert offsets == starts


def test_oversize_length_stops_only_that_connection(server: CaptureServer) -> None:
    good = Stream()
    good.hello(process="good")
    good.workload(1, "dispatch")
    good_sock = connect(server.addresses[0])
    good_sock.sendall(good.data())  # stays open while the other one goes wrong

    bad = Stream()
    bad.hello(process="bad")
    bad.workload(1, "renderpass", draws=1)
    prefix = bad.data()
    oversize = struct.pack("<BQI", m.WORKLOAD, 2, MAX_PAYLOAD + 1)
    after = encode_frame(m.WORKLOAD, 3, {"device": 1, "type": "dispatch", "api": ""})
    with connect(server.addresses[0]) as sock:
        sock.sendall(prefix + oversize + after)
        sock.settimeout(5)
        assert sock.recv(1) == b""  # the server hung up on it
    wait_for(server, lambda c: c.connections == 2 and c.open_connections == 1)

    good.device()
    good.submit([(1, 0)])
    good.goodbye()
    good_sock.sendall(good.data()[len(good.frames[0]) + len(good.frames[1]) :])
    good_sock.close()
    wait_for(server, closed(2))
    summary = server.stop()
    with open_capture(summary.path) as cap:
        first, second = cap.processes()
        assert (first.name, first.state) == ("good", "goodbye")
        assert (second.name, second.state) == ("bad", "out_of_step")
        assert sorted((w.process, w.tag_id) for w in cap.workloads()) == [(1, 1)]
        tags = list(cap._rows("SELECT process, tag_id FROM workloads ORDER BY process"))
        assert tags == [(1, 1), (2, 1)]  # nothing after the oversize frame
        (diag,) = cap.diagnostics()
        assert (diag.kind, diag.connection, diag.offset) == ("oversize", 2, len(prefix))


def test_processes_keep_their_ids_apart_and_tcp_works(tmp_path: Path) -> None:
    srv = CaptureServer(tmp_path / "c.vkscope", [f"unix:{tmp_path / 's'}", "tcp:127.0.0.1:0"])
    srv.start()
    assert srv.addresses[1].startswith("tcp:127.0.0.1:")
    socks = [connect(srv.addresses[0]), connect(srv.addresses[1])]
    streams = [Stream(), Stream()]
    for i, s in enumerate(streams):
        s.hello(process=f"p{i}", pid=100 + i)
        s.labels(1, [f"pass{i}"])
        s.workload(1, "dispatch", groups=[i + 1, 1, 1])
    for _ in range(3):
        for s in streams:
            s.submit([(1, 1)])
    for s, sock in zip(streams, socks, strict=True):
        s.goodbye()
        sock.sendall(s.data())
        sock.close()
    wait_for(srv, closed(2))
    assert srv.counters().instances == 6
    summary = srv.stop()
    assert summary.status == "complete"
    with open_capture(summary.path) as cap:
        assert {p.pid for p in cap.processes()} == {100, 101}
        for process in (1, 2):
            rows = list(cap.workloads(process=process))
            assert [w.submit_id for w in rows] == [1, 2, 3]
            i = next(p.pid or 0 for p in cap.processes() if p.id == process) - 100
            assert {w.label_path for w in rows} == {f"pass{i}"}
            assert {tuple(w.metadata["groups"]) for w in rows} == {(i + 1, 1, 1)}


def test_stop_takes_what_an_open_connection_already_sent(server: CaptureServer) -> None:
    s = Stream()
    s.hello()
    s.workload(1, "dispatch")
    s.submit([(1, 0)])
    sock = connect(server.addresses[0])
    sock.sendall(s.data())
    summary = server.stop()  # straight away, the connection still open
    sock.close()
    assert summary.status == "incomplete"
    with open_capture(summary.path) as cap:
        assert [w.tag_id for w in cap.workloads()] == [1]
        assert cap.processes()[0].state == "disconnected"


def test_a_connection_that_sends_nothing_does_not_count(server: CaptureServer) -> None:
    with connect(server.addresses[0]):
        pass
    s = Stream()
    s.hello()
    s.goodbye()
    send(server, s.data())
    wait_for(server, lambda c: c.messages == 2)
    assert server.stop().status == "complete"


def test_listening_problems_are_reported_clearly(tmp_path: Path) -> None:
    with pytest.raises(CaptureServerError, match="expected unix:PATH or tcp:HOST:PORT"):
        CaptureServer(tmp_path / "a.vkscope", ["udp:1"]).start()
    (tmp_path / "file").write_text("x")
    with pytest.raises(CaptureServerError, match="exists and is not a socket"):
        CaptureServer(tmp_path / "b.vkscope", [f"unix:{tmp_path / 'file'}"]).start()
    with (
        CaptureServer(tmp_path / "c.vkscope", [f"unix:{tmp_path / 's'}"]) as live,
        pytest.raises(CaptureServerError, match="another capture is using it"),
    ):
        CaptureServer(tmp_path / "d.vkscope", live.addresses).start()
    assert not (tmp_path / "s").exists()  # removed when the capture ended
    with pytest.raises(FileExistsError):
        CaptureServer(tmp_path / "c.vkscope", [f"unix:{tmp_path / 's'}"]).start()


def test_a_reconnecting_layer_carries_on_under_its_first_process(server: CaptureServer) -> None:
    first = Stream()
    first.hello(process="app", pid=7)
    first.device()  # announced once: the reconnected layer's SUBMITs name it too
    first.workload(1, "dispatch", groups=[1, 1, 1])
    first.submit([(1, 0)], submit_id=1)
    first.dropped(3)
    send(server, first.data())  # then the link drops, without GOODBYE
    wait_for(server, closed(1))
    again = Stream()
    again.hello(process="app", pid=7)  # the layer greets every connection
    again.submit([(1, 0)], submit_id=2)
    again.annex(1, 1, groups=[9, 1, 1])  # for a submit sent on the first connection
    again.goodbye(dropped=4)
    send(server, again.data())
    wait_for(server, closed(2))
    summary = server.stop()
    assert summary.status == "incomplete"  # what was in flight when the link dropped is lost
    with open_capture(summary.path) as cap:
        assert [(p.id, p.process, p.state) for p in cap.processes()] == [
            (1, 1, "disconnected"),
            (2, 1, "goodbye"),
        ]
        rows = list(cap.workloads())
        assert [(w.process, w.submit_id, w.type) for w in rows] == [
            (1, 1, "dispatch"),
            (1, 2, "dispatch"),
        ]
        assert rows[0].metadata["groups"] == [9, 1, 1]
        assert cap.meta.dropped == 4  # the layer's running count, not a sum
        assert cap.diagnostics() == []


def test_linux_abstract_socket_names(tmp_path: Path) -> None:
    name = f"unix:@vkscope-test-{tmp_path.name}"
    with CaptureServer(tmp_path / "c.vkscope", [name]) as srv:
        s = Stream()
        s.hello()
        s.goodbye()
        send(srv, s.data())
        wait_for(srv, closed(1))
        assert srv.stop().status == "complete"


def test_a_capture_can_be_read_while_it_is_written(server: CaptureServer) -> None:
    s = Stream()
    s.hello()
    s.workload(1, "dispatch", groups=[1, 2, 3])
    s.submit([(1, 0)])
    sock = connect(server.addresses[0])
    sock.sendall(s.data())
    wait_for(server, lambda c: c.instances == 1 and c.uncommitted == 0)
    with open_capture(server.capture_path) as live:
        assert live.meta.status == "capturing"
        assert [w.metadata["groups"] for w in live.workloads()] == [[1, 2, 3]]
    sock.close()
    assert server.stop().status == "incomplete"


def test_a_message_before_hello_is_diagnosed_and_kept(server: CaptureServer) -> None:
    s = Stream()
    s.workload(1, "dispatch", groups=[1, 1, 1])  # before the greeting
    s.hello(process="late")
    s.device()
    s.submit([(1, 0)])
    s.goodbye()
    send(server, s.data())
    greeted = Stream()
    greeted.hello(process="polite")
    greeted.goodbye()
    send(server, greeted.data())
    wait_for(server, closed(2))
    summary = server.stop()
    with open_capture(summary.path) as cap:
        (diag,) = cap.diagnostics()
        assert (diag.kind, diag.connection, diag.offset) == ("before_hello", 1, 0)
        assert diag.message_type == m.WORKLOAD and "before any HELLO" in diag.reason
        assert [w.tag_id for w in cap.workloads()] == [1]  # lost nothing


def test_an_unsupported_protocol_version_is_refused(server: CaptureServer) -> None:
    future = Stream()
    future.add(m.HELLO, 0, {"protocol": 999, "pid": 9, "process": "future", "layer_version": "9"})
    future.device()
    for tag in range(1, 20001):  # far more than a socket buffer: the server must keep reading
        future.workload(tag, "dispatch", groups=[tag, 1, 1])
    future.submit([(1, 0)])
    future.goodbye()
    current = Stream()
    current.hello(process="current")
    current.device()
    current.workload(7, "renderpass", draws=1)
    current.submit([(7, 0)])
    current.goodbye()
    send(server, future.data())
    send(server, current.data())
    wait_for(server, closed(2))
    summary = server.stop()
    assert summary.status == "incomplete"  # what the refused connection sent is not there
    with open_capture(summary.path) as cap:
        refused, good = cap.processes()
        assert (refused.state, refused.messages, good.state) == ("refused", 0, "goodbye")
        assert [(w.process, w.tag_id) for w in cap.workloads()] == [(2, 7)]
        (diag,) = cap.diagnostics()
        assert (diag.kind, diag.connection, diag.offset) == ("protocol", 1, 0)
        assert "protocol 999" in diag.reason and "refused" in diag.reason
        bytes_read = list(cap._rows("SELECT bytes FROM processes WHERE id = 1"))
        assert bytes_read == [(len(future.data()),)]


def test_a_submit_naming_an_unannounced_device_is_diagnosed(server: CaptureServer) -> None:
    s = Stream()
    s.hello()
    s.device(1)
    s.workload(1, "dispatch", groups=[1, 1, 1])
    s.submit([(1, 0)], device=1)
    first = s.submit([(1, 0)], device=2)  # never announced
    s.submit([(1, 0)], device=2)  # said once per device
    s.goodbye()
    send(server, s.data())
    wait_for(server, closed(1))
    summary = server.stop()
    with open_capture(summary.path) as cap:
        (diag,) = cap.diagnostics()
        assert (diag.kind, diag.message_type) == ("unknown_device", m.SUBMIT)
        assert "names device 2" in diag.reason and diag.offset == len(b"".join(s.frames[:4]))
        assert [w.device for w in cap.workloads()] == [1, 2, 2]  # stored all the same
        assert first == 2


@pytest.mark.parametrize("family", ["unix", "tcp"])
def test_two_hundred_connections_at_once_are_all_taken(tmp_path: Path, family: str) -> None:
    # Many processes of one application (or many Vulkan instances) connecting at the same
    # moment, while the server is busy with a big stream: none may be turned away. The
    # connects are non-blocking, as the layer's are: a full listen backlog fails them at once.
    listen = f"unix:{tmp_path / 's'}" if family == "unix" else "tcp:127.0.0.1:0"
    busy = Stream()
    busy.hello(process="busy")
    busy.device()
    for tag in range(1, 100_001):
        busy.workload(tag, "buffer_transfer", kind="copy", bytes=tag)
    busy.goodbye()
    with CaptureServer(tmp_path / "c.vkscope", [listen]) as srv:
        sender = threading.Thread(target=send, args=(srv, busy.data()))
        sender.start()
        wait_for(srv, lambda c: c.bytes > 0)
        where = srv.addresses[0].split(":", 1)[1]
        socks = []
        for _ in range(200):
            if family == "unix":
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.setblocking(False)
                sock.connect(where)  # BlockingIOError here: the backlog was full
            else:
                host, port = where.rsplit(":", 1)
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setblocking(False)
                with contextlib.suppress(BlockingIOError):  # in progress
                    sock.connect((host, int(port)))
            socks.append(sock)
        for i, sock in enumerate(socks):
            s = Stream()
            s.hello(process=f"p{i}", pid=1000 + i)
            s.goodbye()
            sock.setblocking(True)
            sock.settimeout(10)
            sock.sendall(s.data())
            sock.close()
        sender.join()
        wait_for(srv, closed(201), timeout=60)
        summary = srv.stop()
    assert summary.status == "complete"
    with open_capture(summary.path) as cap:
        processes = cap.processes()
        assert len(processes) == 201 and {p.state for p in processes} == {"goodbye"}
        assert {p.pid for p in processes} == {1234, *range(1000, 1200)}


def test_a_socket_path_past_the_unix_limit_falls_back_to_a_short_one(tmp_path: Path) -> None:
    long_dir = tmp_path / ("d" * 60) / ("e" * 60)
    long_dir.mkdir(parents=True)
    path = long_dir / "capture.sock"
    assert len(str(path)) > 107
    with CaptureServer(tmp_path / "c.vkscope", [f"unix:{path}"]) as srv:
        (address,) = srv.addresses
        # A folder of its own under /tmp, which only this user may enter.
        short = Path(address.removeprefix("unix:"))
        assert address.startswith("unix:/tmp/vks-") and short.is_socket()
        assert short.parent.stat().st_mode & 0o777 == 0o700
        (note,) = srv.notes
        assert f"unix:{path} is {len(str(path))} bytes long" in note
        assert "107-byte limit" in note and address in note
        s = Stream()
        s.hello()
        s.goodbye()
        send(srv, s.data())
        wait_for(srv, closed(1))
        assert srv.stop().status == "complete"
    assert list(long_dir.iterdir()) == [] and not short.parent.exists()


def test_finalizing_reports_its_progress(server: CaptureServer) -> None:
    s = Stream()
    s.hello()
    s.device()
    for tag in range(1, 3001):
        s.workload(tag, "dispatch", groups=[tag, 1, 1])
    for first in range(1, 3001, 100):
        sid = s.submit([(t, 0) for t in range(first, first + 100)])
        s.annex(sid, first, invocations=first)
    s.goodbye()
    sock = connect(server.addresses[0])
    for i in range(0, len(s.frames), 500):  # several commits, so several journal rows
        sock.sendall(b"".join(s.frames[i : i + 500]))
        wait_for(server, lambda c, i=i: c.messages >= min(i + 500, len(s.frames) - 1))
        wait_for(server, lambda c: c.uncommitted == 0)
    sock.close()
    wait_for(server, closed(1))
    seen: list[tuple[int, int]] = []
    summary = server.stop(progress=lambda done, total: seen.append((done, total)))
    assert summary.status == "complete"
    assert len(seen) > 1
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (3000 + 3000 + 30 + 30, 6060)  # workloads, instances, annexes, submits


def test_the_pace_sleeps_while_a_trickle_comes_and_not_so_long_that_a_socket_fills() -> None:
    from vkscope.capture.write.server import _PACE_BYTES, _PACE_S, _pace

    assert _pace(73_000, 0.1) == _PACE_S  # a short frame's timeline, 0.7 MB/s: the whole pace
    assert _pace(10_000, 0.3) == _PACE_S
    assert 0.07 < _pace(100_000, 0.06) < 0.08  # 1.7 MB/s: shorter
    assert _pace(60_000, 0.001) < 0.003  # a busy stream, 60 MB/s: next to nothing
    assert _pace(1, -0.5) == 0.0  # a clock that went nowhere
    # At a steady rate, what arrives during the sleep stays within _PACE_BYTES, well inside a
    # Unix socket's default buffer (about 200 KiB), so a layer never waits for the loop.
    rng = random.Random(3)
    for _ in range(1000):
        received, seconds = rng.randint(1, _PACE_BYTES - 1), rng.uniform(1e-4, 1.0)
        assert received / seconds * _pace(received, seconds) <= _PACE_BYTES * (1 + 1e-9)
