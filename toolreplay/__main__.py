"""`python -m toolreplay`: the same command line as `toolreplay`."""

from toolreplay.cli import main

main()
