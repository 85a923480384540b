"""`memactors simulate`: the batch simulation (``memactors.sim``), the same command as
``python -m memactors.sim``. The ``memactors`` backend starts its runtime when the run begins."""

from __future__ import annotations

from memactors.cli.group import cli
from memactors.sim.command import simulate

cli.add_command(simulate)
