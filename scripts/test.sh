#!/usr/bin/env bash
# The project's test command: lint, type checks, C++ unit tests (plain and under sanitizers) and
# the pytest suite against the real Vulkan loader and lavapipe.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${VKSCOPE_SKIP_SETUP:-0}" = 1 ] || bash scripts/setup.sh
export LP_NUM_THREADS=0

# What only the tests need beyond setup: the fleet's engines (the `spark` extra of
# pyproject.toml: pyarrow, DuckDB, PySpark) and the Java runtime Spark runs on.
if ! command -v java >/dev/null && [ "${VKSCOPE_SKIP_APT:-0}" != 1 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        openjdk-17-jre-headless >/dev/null
fi
mapfile -t extra < <(.venv/bin/python -c \
    'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["spark"]))')
.venv/bin/python -m pip install -q "${extra[@]}"

echo "== lint"
bash scripts/generate.sh
.venv/bin/ruff check src generator tests bench harness
.venv/bin/ruff format --check src generator tests bench harness
.venv/bin/mypy
find include layer workloads bench tests -name '*.cpp' -o -name '*.hpp' -o -name '*.h' | \
    xargs clang-format --dry-run --Werror

if [ -f tests/cpp/CMakeLists.txt ]; then
    echo "== C++ unit tests"
    # The plain build is optimized as the layer ships; the sanitizer builds are unoptimized
    # (Debug), which finds the same faults: with ASan and UBSan, -O2 took four times as long to
    # compile (377 s against 95 s here), most of this script's time.
    for san in none address,undefined thread; do
        dir=build/unit-${san//,/-}
        build_type=Debug
        [ "$san" = none ] && build_type=RelWithDebInfo
        cmake -S . -B "$dir" -G Ninja -DVKSCOPE_BUILD_TESTS=ON -DVKSCOPE_BUILD_WORKLOADS=OFF \
            -DCMAKE_BUILD_TYPE="$build_type" \
            -DVKSCOPE_SANITIZE="$([ "$san" = none ] || echo "$san")" >/dev/null
        # Quiet when it builds; a compile error is the whole of the output when it does not.
        if ! log=$(cmake --build "$dir" --target vkscope_unit_tests 2>&1); then
            printf '%s\n' "$log" >&2
            echo "test.sh: the C++ unit tests ($dir) do not build" >&2
            exit 1
        fi
        (cd "$dir" && ctest --output-on-failure)
    done
fi

echo "== pytest"
.venv/bin/python -m pytest "$@"
