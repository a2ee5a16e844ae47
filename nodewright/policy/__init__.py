"""nodewright.policy."""
