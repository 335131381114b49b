#!/usr/bin/env bash
# Runs the device checks (bench/device/checks.py): what no CI run reaches, on a machine with a GPU.
#
# On a bare device machine (x86-64, no Vulkan loader, Python 3.12 without vkscope's packages,
# nothing installable), from the root of a checkout that carries the three folders
# bench/device/prepare.sh fills (.gl .whl .device):
#
#   bash bench/device/run.sh --bring-up [--quick] [CHECK ...]
#   bash bench/device/run.sh --bring-up --bench NAME [ARGS]  bench/NAME.py ARGS, results in $OUT
#
# brings up, in this order: Debian's Vulkan loader (.gl/libvulkan1_*.deb unpacked into /, then
# ldconfig), the Khronos validation layer (.gl/vulkan-validationlayers_*.deb unpacked into
# /tmp/vkscope-gl, found through XDG_DATA_DIRS and LD_LIBRARY_PATH), the NVIDIA driver's manifest
# when the machine has one, the Python wheels (.whl/*.whl into /tmp/vkscope-site) and the
# installed vkscope package built here (.device/site), then runs the checks. Results go to
# $OUT/device.json, the checks' progress and every failure to standard output; the exit status
# is 1 when a check failed.
#
# On a machine whose Vulkan loader and driver are installed (lavapipe here, or a contributor's
# GPU), with the package installed in .venv (scripts/setup.sh):
#
#   bash bench/device/run.sh [--quick] [CHECK ...]      (results in $OUT, default ./out)
#
# `python bench/device/checks.py --list` names the checks; with none named, all run.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = --bring-up ]; then
    shift
    for f in .gl/*.deb .whl/*.whl .device/site/vkscope/__init__.py .device/source.json; do
        [ -e "$f" ] || { echo "run.sh: missing $f: run bench/device/prepare.sh first" >&2; exit 2; }
    done
    # VKSCOPE_LOADER_ROOT and PYTHON let the bring-up be tried on a machine whose / must not
    # change (a folder for the loader, a Python 3.12 of one's own).
    root=${VKSCOPE_LOADER_ROOT:-/}
    for f in .gl/*.deb; do
        case $f in *vulkan-validationlayers*) ;; *) dpkg -x "$f" "$root" ;; esac
    done
    if [ "$root" = / ]; then
        ldconfig
    else
        export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    rm -rf /tmp/vkscope-gl
    for f in .gl/vulkan-validationlayers_*.deb; do dpkg -x "$f" /tmp/vkscope-gl; done
    # Found through the loader's XDG search path: VK_LAYER_PATH would hide the layer folders
    # that VK_ADD_LAYER_PATH names (vkscope's, the counting layer's).
    export XDG_DATA_DIRS=/tmp/vkscope-gl/usr/share:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}
    export LD_LIBRARY_PATH=/tmp/vkscope-gl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ]; then
        export VK_DRIVER_FILES=$nvidia_icd
    fi
    python=${PYTHON:-python3}
    rm -rf /tmp/vkscope-site
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/vkscope-site .whl/*.whl
    # The checkout's root too: bench/ and harness/ import as packages (scripts/setup.sh's .pth).
    export PYTHONPATH=$PWD/.device/site:/tmp/vkscope-site:$PWD${PYTHONPATH:+:$PYTHONPATH}
    export VKSCOPE_DEVICE_BUNDLE=1  # the commit measured is the bundle's (.device/source.json)
    # The `vkscope` command, as pip installs it beside the interpreter (the CLI tests run it).
    mkdir -p /tmp/vkscope-bin
    printf '#!/bin/sh\nexec %s -m vkscope "$@"\n' "$(command -v "$python")" > /tmp/vkscope-bin/vkscope
    chmod +x /tmp/vkscope-bin/vkscope
    export PATH=/tmp/vkscope-bin:$PATH
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    fi
else
    python=${PYTHON:-.venv/bin/python}
fi

export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if [ "${1:-}" = --bench ]; then
    # Benchmarks that need no GPU but an idle machine (the memory of reports and diffs): each
    # writes its results file and page into $OUT; bench/tables.py regenerates the page from the
    # results file once it is copied into bench/results.
    shift
    out=${OUT:-out}
    mkdir -p "$out"
    name=$1
    shift
    exec "$python" "bench/$name.py" --results "$out/$name.json" --docs "$out/$name.md" "$@"
fi
exec "$python" bench/device/checks.py "$@"
