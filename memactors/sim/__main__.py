"""``python -m memactors.sim``: see ``memactors.sim.command``."""

from .command import simulate

if __name__ == "__main__":
    simulate(prog_name="python -m memactors.sim")
