"""Where the installed package keeps the layer and the workload program."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
LAYER_MANIFEST = "VkLayer_vkscope.json"


class NotBuilt(RuntimeError):
    """The compiled parts are missing: the package was not installed with pip."""


def layer_dir() -> Path:
    d = PACKAGE_DIR / "_layer"
    if not (d / LAYER_MANIFEST).is_file():
        raise NotBuilt(
            f"the vkscope layer is not installed in {d}; install the package with "
            "'pip install .' from the source tree (it builds the layer)"
        )
    return d


def workload_program() -> Path:
    exe = PACKAGE_DIR / "_bin" / "vkscope-workload"
    if not exe.is_file():
        raise NotBuilt(f"the workload program is not installed at {exe}; reinstall with pip")
    return exe
