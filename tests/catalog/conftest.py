"""Catalog test fixtures: one embedded (moto-backed) us-east-1 load per session, cached on disk
under a session temp dir so no test touches the user's ~/.cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nodewright.catalog import Catalog, load_catalog, loader


@pytest.fixture(scope="session")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("xdg")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(home))
    mp.delenv("NODEWRIGHT_NO_CACHE", raising=False)
    mp.setenv("NODEWRIGHT_CATALOG_SOURCE", "embedded")
    loader.clear_memory_cache()
    yield home
    loader.clear_memory_cache()
    mp.undo()


@pytest.fixture(scope="session")
def us_east_1(cache_home: Path) -> Catalog:
    return load_catalog("aws:us-east-1")
