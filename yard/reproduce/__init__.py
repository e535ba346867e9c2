"""``yard reproduce``: the published experiments yard is built from, one command each.

:data:`EXPERIMENTS` holds their definitions (:mod:`yard.reproduce.experiments`);
:func:`run_experiment` plays them; :mod:`yard.reproduce.report` renders the tables and plots.
"""

from yard.reproduce.experiments import EXPERIMENTS
from yard.reproduce.model import Cell, Experiment, ReproduceError
from yard.reproduce.runner import run_experiment

__all__ = ["EXPERIMENTS", "Cell", "Experiment", "ReproduceError", "run_experiment"]
