"""`python -m vkscope.diff BASE NEW ...`: the same as `vkscope diff BASE NEW ...`."""

import argparse
import sys

from ..guard import command_line
from .options import configure, run

parser = argparse.ArgumentParser(prog="python -m vkscope.diff", description=__doc__)
configure(parser)
sys.exit(command_line(lambda: run(parser.parse_args())))
