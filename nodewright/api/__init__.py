"""nodewright.api."""
