"""``python -m memactors``: the same command line as the ``memactors`` console script."""

from memactors.cli import main

main()
