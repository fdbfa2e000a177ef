"""A local, visual walk through one incident: replay, correct, compare, promote."""
