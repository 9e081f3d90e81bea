"""`python -m meta_tools`: the `meta-tools` command."""

from .cli import main

main()
