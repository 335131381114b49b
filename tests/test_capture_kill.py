"""A capture server killed outright keeps a readable file with everything it committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import vkscope
from vkscope.capture import open_capture
from vkscope.capture.client import Stream, connect

SERVER = """
import sys, time
from pathlib import Path
from vkscope.capture import CaptureServer
server = CaptureServer(Path(sys.argv[1]), ["unix:" + sys.argv[2]])
server.start()
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def test_sigkill_keeps_what_was_committed(tmp_path: Path) -> None:
    capture, sock_path = tmp_path / "killed.vkscope", tmp_path / "s.sock"
    env = dict(os.environ)
    # The server process imports the same vkscope as this one (source tree or installed).
    env["PYTHONPATH"] = os.pathsep.join([str(Path(vkscope.__file__).parents[1]), *sys.path])
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(capture), str(sock_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        s = Stream()
        s.hello(process="doomed")
        s.labels(1, ["frame"])
        for tag in range(1, 5001):
            s.workload(tag, "dispatch", groups=[tag, 1, 1])
        for first in range(1, 5001, 50):
            s.submit([(t, 1) for t in range(first, first + 50)], frame=first // 1000)
        s.frame(0)
        sock = connect(f"unix:{sock_path}")
        sock.sendall(s.data())
        time.sleep(0.5)  # several commit intervals
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        sock.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with open_capture(capture) as cap:
        assert cap.meta.status == "capturing"  # never finalized
        assert cap.meta.process_name == "doomed"
        rows = list(cap.workloads())
        assert len(rows) == 5000
        assert [w.tag_id for w in rows] == list(range(1, 5001))
        assert rows[-1].metadata["groups"] == [5000, 1, 1]
        assert rows[0].label_path == "frame"
        assert [f.number for f in cap.frames()] == [0]
        cap.check()
    with open_capture(capture) as again:  # and it stays readable
        assert again.workload_count() == 5000
