#!/usr/bin/env bash
# Installs what vkscope needs on Debian 12 (the Vulkan stack, compilers, a headless browser for
# the HTML tests) and builds it into ./.venv. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    # Vulkan: loader, headers with the registry, lavapipe, tools, validation, shader compiler
    mesa-vulkan-drivers libvulkan-dev vulkan-tools vulkan-validationlayers glslang-tools
    spirv-tools xvfb
    # building the layer with every desktop window-system command in its dispatch tables
    g++ cmake ninja-build pkg-config libx11-dev libxcb1-dev libxrandr-dev libwayland-dev
    clang-format python3-venv python3-dev libgtest-dev
    # headless browser for the HTML report's tests (Playwright drives it; it downloads nothing)
    chromium
)
if [ "${VKSCOPE_SKIP_APT:-0}" != 1 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# Builds the C++ layer and the workload program through CMake and installs them in the package.
.venv/bin/python -m pip install -q ".[test]"
# The package's generated protocol module, also in the source tree for mypy and the benchmarks
# (which run on the tree); the build puts its own copy into the installed package.
bash scripts/generate.sh
# The repository's root on the environment's path: the benchmarks (bench/) and the harness that
# tests and benchmarks share (harness/) import as packages from anywhere, without sys.path edits.
.venv/bin/python -c 'import pathlib, site; pathlib.Path(site.getsitepackages()[0], "vkscope-repository.pth").write_text(str(pathlib.Path.cwd()) + "\n")'
echo "vkscope installed in $(pwd)/.venv: run .venv/bin/vkscope --help"
