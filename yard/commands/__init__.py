"""Subcommands of ``yard`` that belong to no single package."""
