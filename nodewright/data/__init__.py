"""Package data shipped with nodewright: the on-demand price tables (``prices-<region>.json``)."""
