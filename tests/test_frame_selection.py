"""The `frames` selection: vkscope's parser (frame_selection.py) accepts exactly what the layer's
parser accepts, checked by running the real layer on the same strings; `vkscope run` refuses a
bad selection before the application starts, from any of its three sources; `report --frames`
reads frame lists with the same rules."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.env import base_env, layer_env, run, vkscope_cli
from vkscope.frame_selection import (
    U64_MAX,
    FrameSelection,
    FrameSelectionError,
    parse_frame_selection,
)

# Refused by the layer and by vkscope: the values a user tried (and more).
BAD = [
    "abc", "5-3", "every:0", "every:-2", "1,,2", "trigger:", "-5", str(2**64), "host:3",
    ",1", "1-2-3", "every:", "every:x", "+5", "5 6", "1;2", "HOST", "٣", "3\n", "every:1.5",
    "trigger: \t", "1,-", "0x10", f"{2**64}-", f"1-{2**64}",
]  # fmt: skip
# Accepted by both: lists and ranges with blanks, the special forms, the layer's trailing comma.
GOOD = {
    "": FrameSelection("all"),
    " \t": FrameSelection("all"),
    "3": FrameSelection("ranges", ((3, 3),)),
    " 3 , 10 - 20 ,100-": FrameSelection("ranges", ((3, 3), (10, 20), (100, None))),
    "5-5": FrameSelection("ranges", ((5, 5),)),
    "1,2-": FrameSelection("ranges", ((1, 1), (2, None))),
    "1,": FrameSelection("ranges", ((1, 1),)),
    "007": FrameSelection("ranges", ((7, 7),)),
    str(U64_MAX): FrameSelection("ranges", ((U64_MAX, U64_MAX),)),
    "host": FrameSelection("host"),
    " host\t": FrameSelection("host"),
    "every:3": FrameSelection("every", every=3),
    "every: 12 ": FrameSelection("every", every=12),
    "trigger:/tmp/go now": FrameSelection("trigger", trigger="/tmp/go now"),
}


def test_what_vkscope_accepts() -> None:
    for text, expected in GOOD.items():
        assert parse_frame_selection(text) == expected, text
    for text in BAD:
        with pytest.raises(FrameSelectionError):
            parse_frame_selection(text)


def test_messages_say_what_is_wrong() -> None:
    for text, words in (
        ("5-3", "range '5-3' runs backwards"),
        ("every:0", "every:N needs a whole number of frames N of at least 1"),
        ("trigger:", "trigger: needs the path of a file"),
        (str(2**64), "(frame numbers end at 2^64 - 1)"),
        ("1,,2", "'' is not a frame number"),
        ("abc", "'abc' is not a frame number"),
    ):
        with pytest.raises(FrameSelectionError, match=None) as info:
            parse_frame_selection(text)
        assert words in str(info.value), (text, str(info.value))


# The layer's verdict on a string: a process that creates a Vulkan instance with the layer for
# each string given to it (VK_VKSCOPE_FRAMES), and answers with what the layer logged.
ORACLE = """
import json, os, sys
import vulkan as vk
log = sys.argv[1]
info = vk.VkInstanceCreateInfo(sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO)
for line in sys.stdin:
    os.environ["VK_VKSCOPE_FRAMES"] = json.loads(line)
    before = os.path.getsize(log) if os.path.exists(log) else 0
    vk.vkDestroyInstance(vk.vkCreateInstance(info, None), None)
    with open(log, "rb") as f:
        f.seek(before)
        print(json.dumps(f.read().decode("utf-8", "replace")), flush=True)
"""


class Layer:
    def __init__(self, layer_dir: Path, log: Path) -> None:
        env = layer_env(layer_dir, log_file=str(log), log_level="warn")
        self._proc = subprocess.Popen(
            [sys.executable, "-c", ORACLE, str(log)], env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        self._seen: dict[str, bool] = {}

    def refuses(self, text: str) -> bool:
        # The layer says each distinct message once per process: ask once per string.
        if text not in self._seen:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(text) + "\n")
            self._proc.stdin.flush()
            said = json.loads(self._proc.stdout.readline())
            self._seen[text] = f"setting frames='{text}' ignored" in said
        return self._seen[text]

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=60)


@pytest.fixture(scope="module")
def layer(layer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Layer]:
    oracle = Layer(layer_dir, tmp_path_factory.mktemp("oracle") / "layer.log")
    yield oracle
    oracle.close()


def refused_by_vkscope(text: str) -> bool:
    try:
        parse_frame_selection(text)
    except FrameSelectionError:
        return True
    return False


@pytest.mark.vulkan
def test_the_layer_agrees_on_the_listed_strings(layer: Layer) -> None:
    for text in BAD:
        assert layer.refuses(text), text
    for text in GOOD:
        assert not layer.refuses(text), text


# Strings near the grammar: its words, digits, separators and blanks, in any order.
_PIECES = st.sampled_from(
    ["0", "1", "3", "9", "10", "007", str(U64_MAX), str(2**64), "-", ",", " ", "\t", "every:",
     "trigger:", "host", ":", "x", "+", "\n", "/p", "٣"]
)  # fmt: skip
_NEAR = st.lists(_PIECES, max_size=8).map("".join)


@pytest.mark.vulkan
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_NEAR)
def test_vkscope_and_the_layer_accept_the_same_strings(layer: Layer, text: str) -> None:
    assert refused_by_vkscope(text) == layer.refuses(text), repr(text)


@pytest.mark.parametrize(
    ("how", "words"),
    [
        (["--frames", "5-3"], "--frames '5-3': range '5-3' runs backwards"),
        (["-s", "frames=every:0"], "setting frames='every:0': every:N needs"),
        (["--frames", "host:3"], "--frames 'host:3': 'host:3' is not a frame number"),
        ([], "VK_VKSCOPE_FRAMES (from the environment): setting frames='1,,2'"),
    ],
)
def test_run_refuses_a_bad_selection_before_the_application_starts(
    tmp_path: Path, how: list[str], words: str
) -> None:
    env = base_env()
    if not how:
        env["VK_VKSCOPE_FRAMES"] = "1,,2"
    marker = tmp_path / "ran"
    res = run([vkscope_cli(), "run", *how, "--", "touch", marker], env, cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("vkscope: ") and res.stderr.count("\n") == 1, res.stderr
    assert words in res.stderr, res.stderr
    assert not marker.exists()
    assert list(tmp_path.iterdir()) == []
