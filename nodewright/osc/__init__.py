"""nodewright.osc."""
