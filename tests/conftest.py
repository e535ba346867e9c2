"""Shared test settings and fixtures: a Hypothesis profile without deadlines (the machine is
shared); a throwaway PostgreSQL schema (on the server named by YARD_TEST_POSTGRES_URL,
``.ci/postgres start``); a local Ray instance with 2 CPUs (the ``cluster`` extra)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings

settings.register_profile("yard", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("yard")


def postgres_url_with_schema(base_url: str, schema: str) -> str:
    """``base_url`` with every connection's search_path set to ``schema``."""
    url = sa.make_url(base_url).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL on the YARD_TEST_POSTGRES_URL server whose connections use a new, empty
    schema (dropped afterwards). Only for tests collected when that variable is set."""
    base = os.environ.get("YARD_TEST_POSTGRES_URL")
    assert base, "pg_url needs YARD_TEST_POSTGRES_URL (.ci/postgres start)"
    schema = f"t_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    try:
        yield postgres_url_with_schema(base, schema)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    """A local Ray instance with 2 CPUs for one test module; yields the ``ray`` module.
    Only for tests collected when Ray is installed (or under CI, where it must be)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
