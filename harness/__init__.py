"""What the tests (tests/) and the benchmarks (bench/) drive vkscope with, shared by both: the
environments that turn the layer on (env.py), a receiver of what the layer sends, decoded by the
protocol definition's own oracle (timeline.py, protocol.py), readers of timing annexes
(timing.py), and what the driver offers, probed without vkscope (driver.py).

Importable from the repository's root, which pytest (pyproject.toml) and the virtual environment
scripts/setup.sh makes (a .pth file) put on the path; tests/support holds what only tests use.
"""
