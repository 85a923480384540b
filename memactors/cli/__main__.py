"""``python -m memactors.cli``."""

from memactors.cli import main

main()
