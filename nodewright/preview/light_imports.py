"""Provider packages imported by what the program uses, not whole: part of the preview's light path.

Boundary: ``pulumi_aws.ec2``'s ``__init__`` imports its ~190 modules (every EC2 resource), and
``pulumi_kubernetes.core.v1``'s every core resource, when the program first touches one class: most
of a preview's import time. :func:`import_by_use` puts in place of such a not-yet-loaded package a
:class:`PartialPackage` that imports, on each name asked, the one module that defines it (the
generated layout: ``LaunchTemplate`` in ``launch_template.py`` or ``LaunchTemplate.py``, ``...Args``
in ``_inputs.py``, ``get_x_output`` in ``get_x.py``, submodules by name). A name found nowhere runs
the package's own ``__init__`` in place, which then binds the very modules and classes already
imported: class identity never differs from a whole import, and every name stays reachable.

Only ``nodewright preview`` installs it (never a real ``pulumi`` run). Private importlib detail used:
a package pulumi registered lazily is an ``importlib.util._LazyModule`` until first touched
(:func:`missing_import_api` reports it when a Python release changes that).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import sys
import types
from typing import Any

PACKAGES: tuple[str, ...] = (
    "pulumi_aws.ec2",
    "pulumi_aws.iam",
    "pulumi_aws.ssm",
    "pulumi_kubernetes.core.v1",
)
"""The provider packages the nodewright program touches a few classes of."""

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _lazy_module_types() -> tuple[type, ...]:
    """The module classes of a package registered lazily and not touched yet (importlib's, and
    pulumi's own copy of it)."""
    import pulumi._utils

    found = (getattr(importlib.util, "_LazyModule", None), getattr(pulumi._utils, "_LazyModule", None))
    return tuple(t for t in found if isinstance(t, type))


def missing_import_api() -> list[str]:
    """The private attributes :func:`import_by_use` needs that this Python or pulumi lacks."""
    import pulumi._utils

    return [
        f"{mod.__name__}._LazyModule"
        for mod in (importlib.util, pulumi._utils)
        if not isinstance(getattr(mod, "_LazyModule", None), type)
    ]


class PartialPackage(types.ModuleType):
    """A generated provider package whose modules are imported as their names are asked for."""

    def __init__(self, name: str, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(name)
        self._nodewright_setup(spec)

    def _nodewright_setup(self, spec: importlib.machinery.ModuleSpec) -> None:
        self.__spec__ = spec
        self.__loader__ = spec.loader
        self.__path__ = list(spec.submodule_search_locations or [])
        self.__file__ = spec.origin
        self.__package__ = spec.name
        self.__dict__["_nodewright_whole"] = False

    def _submodule(self, name: str) -> types.ModuleType | None:
        full = f"{self.__name__}.{name}"
        if full in sys.modules:
            return sys.modules[full]
        if importlib.machinery.PathFinder.find_spec(full, self.__path__) is None:
            return None
        return importlib.import_module(full)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self.__dict__["_nodewright_whole"]:
            raise AttributeError(name)
        candidates = [name, _CAMEL.sub("_", name).lower()]
        if name.endswith(("Args", "ArgsDict")):
            candidates.insert(0, "_inputs")
        if name.endswith("_output"):
            candidates.append(name[: -len("_output")])
        for candidate in dict.fromkeys(candidates):
            module = self._submodule(candidate)
            if module is not None and name in getattr(module, "__all__", ()):
                value = getattr(module, name)
                setattr(self, name, value)  # as the package's `from .module import *` binds it
                return value
        module = self._submodule(name)
        if module is not None:
            return module
        self._whole()
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None

    def _whole(self) -> None:
        """Run the package's own ``__init__`` here: every name, bound to the modules already imported."""
        self.__dict__["_nodewright_whole"] = True
        loader = self.__spec__.loader if self.__spec__ else None
        code = (
            loader.get_code(self.__name__)
            if isinstance(loader, importlib.machinery.SourceFileLoader)
            else None
        )
        if code is None:  # pragma: no cover - the generated packages are source files
            raise ImportError(f"cannot complete {self.__name__}")
        exec(code, self.__dict__)


def import_by_use(packages: tuple[str, ...] = PACKAGES) -> None:
    """Make each of ``packages`` that is not imported yet a :class:`PartialPackage`: the lazily
    registered module object itself when there is one (so whoever holds it holds the partial
    package), else a new one. A package already loaded, or not installed, is left alone."""
    if missing_import_api():
        return
    lazy = _lazy_module_types()
    for full in packages:
        parent_name, _, child = full.rpartition(".")
        try:
            parent = importlib.import_module(parent_name)
            search = list(parent.__path__)
        except ImportError:
            continue
        current = sys.modules.get(full)
        if current is not None and type(current) not in lazy:
            continue  # loaded (or partial) already
        spec = importlib.machinery.PathFinder.find_spec(full, search)
        if spec is None or not spec.submodule_search_locations:
            continue
        if current is None:
            package = PartialPackage(full, spec)
            sys.modules[full] = package
            setattr(parent, child, package)
        else:
            current.__class__ = PartialPackage  # before any read: a read would load it whole
            PartialPackage._nodewright_setup(current, spec)  # type: ignore[arg-type]
