"""yard package."""
