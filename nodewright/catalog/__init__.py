"""nodewright.catalog."""
