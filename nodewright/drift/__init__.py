"""nodewright.drift."""
