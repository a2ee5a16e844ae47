"""Fixtures for tests/disruption (helpers live in disrupt_support.py)."""
