"""Fixtures for tests/drift (helpers live in drift_support.py)."""

from drift_support import cluster_file

__all__ = ["cluster_file"]
