"""`python -m govkit`: the same command line as `govkit`."""

from govkit.cli.fast import main

main()
