"""`python -m vkscope.diff BASE NEW ...`: the same as `vkscope diff BASE NEW ...`."""

import sys

from ..cli import main

sys.exit(main(["diff", *sys.argv[1:]]))
