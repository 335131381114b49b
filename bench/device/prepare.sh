#!/usr/bin/env bash
# Prepares, in one go, what bench/device/run.sh --bring-up needs on a bare GPU machine: three
# folders of this checkout that git ignores and the device tool carries (about 10 MB together).
#
#   bash bench/device/prepare.sh        from the checkout the device tool sends, after
#                                       scripts/setup.sh (it needs .venv)
#
#   .gl/      Debian 12's Vulkan loader, the GL dispatch libraries a vendor ICD may need and the
#             Khronos validation layer, as .deb files (apt-get download: libvulkan1, libglvnd0,
#             libglx0, libegl1, libopengl0, libgl1, libgles2, vulkan-validationlayers; amd64)
#   .whl/     wheels of vkscope's Python dependencies for the device's Python (3.12, x86-64
#             manylinux), at the versions installed in .venv: msgspec rich markdown-it-py mdurl
#             pygments vulkan cffi pycparser perfetto protobuf nvidia-ml-py (pytest, pytest-timeout and
#             hypothesis are on the device already)
#   .device/  site/vkscope: the vkscope package installed from this tree (pip install . rebuilds
#             it first): Python code, the layer, vkscope-workload, the recording harness and its
#             counting layer; source.json: the commit it was built from and whether the tree was
#             clean, which the results then carry
#
# Then, on the device:  bash bench/device/run.sh --bring-up   with carry [".gl", ".whl", ".device"]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv/bin/python ] || { echo "prepare.sh: no .venv: run scripts/setup.sh first" >&2; exit 2; }
python_version=${DEVICE_PYTHON:-3.12}

echo "== .device: the package, rebuilt from this tree"
.venv/bin/python -m pip install -q --no-deps .
rm -rf .device
mkdir -p .device/site
site=$(.venv/bin/python -c 'import os, vkscope; print(os.path.dirname(vkscope.__file__))')
cp -r "$site" .device/site/vkscope
find .device -name __pycache__ -prune -exec rm -rf {} +
.venv/bin/python - > .device/source.json <<'EOF'
import json
from bench.machine import source
print(json.dumps(source()))
EOF

echo "== .gl: the Vulkan loader and the validation layer"
rm -rf .gl
mkdir -p .gl /tmp/vkscope-apt/lists/partial
apt_options=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64
             -oDir::State::Lists=/tmp/vkscope-apt/lists)
apt-get "${apt_options[@]}" update -qq
# The NVIDIA driver's Vulkan ICD (libGLX_nvidia) needs the GL vendor-neutral dispatch libraries.
(cd .gl && apt-get "${apt_options[@]}" download libvulkan1 vulkan-validationlayers libglvnd0 libglx0 \
    libegl1 libopengl0 libgl1 libgles2)

echo "== .whl: wheels for Python $python_version"
rm -rf .whl
mkdir -p .whl
wheels=(msgspec rich markdown-it-py mdurl pygments vulkan cffi pycparser perfetto protobuf
        nvidia-ml-py)
pins=()
for name in "${wheels[@]}"; do
    pins+=("$name==$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$name'))")")
done
.venv/bin/python -m pip download -q --no-deps --only-binary=:all: -d .whl \
    --python-version "$python_version" --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 "${pins[@]}"

du -sh .gl .whl .device
echo "carry: [\".gl\", \".whl\", \".device\"]; command: bash bench/device/run.sh --bring-up"
