"""Capture to object storage, offline: `uv run python -m examples.capture_s3.run`."""
