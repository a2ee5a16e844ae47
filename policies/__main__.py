"""The nodewright CrossGuard policy pack (built from nodewright.policy)."""
