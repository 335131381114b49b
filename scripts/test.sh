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

# One C++ unit-test build: configured, built (quiet when it builds; a compile error is the
# whole of the output when it does not) and run.
unit_tests() {
    local san=$1 dir=build/unit-${1//,/-} build_type=Debug log
    [ "$san" = none ] && build_type=RelWithDebInfo
    cmake -S . -B "$dir" -G Ninja -DVKSCOPE_BUILD_TESTS=ON -DVKSCOPE_BUILD_WORKLOADS=OFF \
        -DCMAKE_BUILD_TYPE="$build_type" \
        -DVKSCOPE_SANITIZE="$([ "$san" = none ] || echo "$san")" >/dev/null
    if ! log=$(cmake --build "$dir" --target vkscope_unit_tests 2>&1); then
        printf '%s\n' "$log" >&2
        echo "test.sh: the C++ unit tests ($dir) do not build" >&2
        return 1
    fi
    (cd "$dir" && ctest --output-on-failure)
}

unit_pid=""
if [ -f tests/cpp/CMakeLists.txt ]; then
    # All three builds (the plain one optimized as the layer ships; the sanitizer builds
    # unoptimized, Debug, which finds the same faults: with ASan and UBSan, -O2 took four times as
    # long to compile, 377 s against 95 s here) build and run while pytest runs, whose lavapipe
    # runs leave part of a 2-core machine idle, to keep CI's whole run under its 20 minutes;
    # their output follows pytest's.
    unit_log=$(mktemp)
    (unit_tests none && unit_tests address,undefined && unit_tests thread) >"$unit_log" 2>&1 &
    unit_pid=$!
fi

echo "== pytest"
# Two workers (pytest-xdist; one per core here): most tests wait on processes, sockets and
# signals rather than compute. A module's tests stay on one worker, so a module's fixtures (a
# Spark session, a capture several tests read) are built once. Tests marked `solo` assert a rate
# or a deadline that a test beside them would move: they run afterwards, one at a time.
# Arguments (`-k`, `-m`, paths) run just those tests, in this process.
status=0
unit_status=""
unit_tests_done() {
    if [ -n "$unit_pid" ] && [ -z "$unit_status" ]; then
        unit_status=0
        wait "$unit_pid" || unit_status=$?
    fi
}
if [ $# -gt 0 ]; then
    .venv/bin/python -m pytest "$@" || status=$?
else
    .venv/bin/python -m pytest -n 2 --dist loadfile -m "not solo" || status=$?
    # Alone means beside nothing else either: the C++ builds and their sanitizer runs, still
    # going when the other tests end, took a core from lavapipe's dispatches and halved the
    # longer ones' speed, so they finish first.
    unit_tests_done
    echo "== pytest: the tests that run alone"
    .venv/bin/python -m pytest -m solo || status=$?
fi
if [ -n "$unit_pid" ]; then
    echo "== C++ unit tests: plain, under ASan/UBSan and TSan"
    unit_tests_done
    if [ "$unit_status" != 0 ]; then
        cat "$unit_log"
        echo "test.sh: the C++ unit tests failed" >&2
        status=1
    else
        grep -E "tests passed|Total Test time" "$unit_log" || true
    fi
    rm -f "$unit_log"
fi
exit "$status"
