"""nodewright.userdata."""
