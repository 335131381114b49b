#!/usr/bin/env bash
# The project's test command: lint, type checks, C++ unit tests (plain and under sanitizers) and
# the pytest suite against the real Vulkan loader and lavapipe.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${VKSCOPE_SKIP_SETUP:-0}" = 1 ] || bash scripts/setup.sh
export LP_NUM_THREADS=0

echo "== lint"
bash scripts/generate.sh
.venv/bin/ruff check src generator tests bench
.venv/bin/ruff format --check src generator tests bench
.venv/bin/mypy
find layer workloads bench tests -name '*.cpp' -o -name '*.hpp' -o -name '*.h' | \
    xargs clang-format --dry-run --Werror

if [ -f tests/cpp/CMakeLists.txt ]; then
    echo "== C++ unit tests"
    for san in none address,undefined thread; do
        dir=build/unit-${san//,/-}
        cmake -S . -B "$dir" -G Ninja -DVKSCOPE_BUILD_TESTS=ON -DVKSCOPE_BUILD_WORKLOADS=OFF \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DVKSCOPE_SANITIZE="$([ "$san" = none ] || echo "$san")" >/dev/null
        cmake --build "$dir" --target vkscope_unit_tests >/dev/null
        (cd "$dir" && ctest --output-on-failure)
    done
fi

echo "== pytest"
.venv/bin/python -m pytest "$@"
