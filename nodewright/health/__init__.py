"""nodewright.health."""
