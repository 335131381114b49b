"""How `vkscope run` enables the layer: an implicit manifest in a folder of its own, found
through XDG_DATA_DIRS and switched on by one variable, with the user's search path kept."""

from __future__ import annotations

import json
from pathlib import Path

from vkscope import launch, paths
from vkscope.settings import LAYER_NAME


def test_the_manifest_names_the_installed_library_and_its_switches(tmp_path: Path) -> None:
    written = launch.write_implicit_manifest(paths.layer_dir(), tmp_path)
    assert written.parent == tmp_path / "vulkan" / "implicit_layer.d"
    layer = json.loads(written.read_text())["layer"]
    assert layer["name"] == LAYER_NAME
    library = Path(layer["library_path"])
    assert library.is_absolute() and library.is_file()
    assert layer["enable_environment"] == {launch.ENABLE_VARIABLE: "1"}
    assert layer["disable_environment"] == {launch.DISABLE_VARIABLE: "1"}


def test_the_users_search_path_and_layers_are_kept(tmp_path: Path) -> None:
    base = {
        "XDG_DATA_DIRS": "/opt/a:/opt/b",
        "VK_INSTANCE_LAYERS": "VK_LAYER_KHRONOS_validation",
        launch.DISABLE_VARIABLE: "1",
    }
    env = launch.layer_environment(base, tmp_path, {"timing": "queue"})
    assert env["XDG_DATA_DIRS"] == f"{tmp_path}:/opt/a:/opt/b"
    assert env["VK_INSTANCE_LAYERS"] == "VK_LAYER_KHRONOS_validation"  # the user's, untouched
    assert env[launch.ENABLE_VARIABLE] == "1" and launch.DISABLE_VARIABLE not in env
    assert env["VK_VKSCOPE_TIMING"] == "queue"


def test_an_unset_search_path_keeps_the_default_folders(tmp_path: Path) -> None:
    for base in ({}, {"XDG_DATA_DIRS": ""}):
        env = launch.layer_environment(base, tmp_path, {})
        assert env["XDG_DATA_DIRS"] == f"{tmp_path}:/usr/local/share:/usr/share"
