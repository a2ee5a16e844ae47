"""nodewright.cluster."""
