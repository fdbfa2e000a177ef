"""Runnable examples; a package only so `python -m examples.incident_replay_demo.server` works."""
