"""Shared test settings: a Hypothesis profile without deadlines (the machine is shared)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("yard", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("yard")
