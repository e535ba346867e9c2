"""Tournaments: pure schedule generation and the runner that plays a schedule on a server."""
