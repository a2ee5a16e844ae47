"""tests/costplan reuses the scheduling suite's scenario helpers (``test_sched_support``: typed
wrappers over :mod:`builders`, the fake catalog, ``run``), which live in tests/scheduling.

pytest puts a test file's own folder on ``sys.path`` (no ``__init__.py``, "prepend" import mode),
so tests/scheduling is only importable here when this folder runs alone if it is added: appended,
so that nothing in it shadows a module of this folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

_SCHEDULING = str(Path(__file__).resolve().parent.parent / "scheduling")
if _SCHEDULING not in sys.path:
    sys.path.append(_SCHEDULING)
