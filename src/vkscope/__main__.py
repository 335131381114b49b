"""`python -m vkscope ...`: the same as the `vkscope` command."""

import sys

from .cli import main

sys.exit(main())
