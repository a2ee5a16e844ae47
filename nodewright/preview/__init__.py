"""nodewright.preview."""
