"""Package data shipped with nodewright: the on-demand price tables (``prices-<region>.json``), the
branch-ENI table (``vpc-branch-enis.json``) and the CRDs; sources in ``PROVENANCE`` files."""
