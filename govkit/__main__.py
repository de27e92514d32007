"""`python -m govkit`: the same command line as `govkit`."""

from govkit.cli.main import main

main()
