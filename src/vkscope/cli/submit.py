"""A `vkscope` command line as a Spark application, for spark-submit (docs/fleet.md):

    spark-submit --master yarn .../vkscope/cli/submit.py trend DATASET --by build --gate

Runs the command with `--engine spark` and the session spark-submit set up (its master and
settings as submitted); exits with the command's code."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from vkscope.cli import main as vkscope

    if argv[:1] not in (["trend"], ["fleet"]):
        print("vkscope: submit.py runs `trend ...` or `fleet query|summary ...`", file=sys.stderr)
        return 2
    return vkscope([*argv, "--engine", "spark"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
