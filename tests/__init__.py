"""The test suite, one folder per package it tests (docs/architecture.md, "Where to add").

Settings every folder shares: :data:`SCALE` and :data:`BACKENDS`.
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("YARD_TEST_TIMEOUT_SCALE", "1"))
"""What the tests' timeouts are multiplied by (YARD_TEST_TIMEOUT_SCALE; for slow machines)."""

BACKENDS = ["sqlite", *(["postgresql"] if os.environ.get("YARD_TEST_POSTGRES_URL") else [])]
"""The database backends a test parametrised over them runs on: SQLite, and PostgreSQL when
YARD_TEST_POSTGRES_URL names a server (``.ci/postgres start``)."""
