"""``python -m nodewright.cli``: the ``nodewright`` command (as the console script runs it)."""

from nodewright.cli import main

main()
