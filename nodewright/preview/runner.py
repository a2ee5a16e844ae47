"""Run a project's Pulumi program (``__main__.py``) under Pulumi's mock runtime.

Boundary: no engine, no plugins, no cloud credentials. The project is the directory holding
``Pulumi.yaml`` (``--project-dir``, else the nearest one at or above the working directory), not
this package's source tree: a repository made by ``nodewright init`` runs the same way as this one.
The program runs in this process exactly as
the Python language host would run it (project directory as working directory and on
``sys.path``, ``main:`` of ``Pulumi.yaml`` honoured, stack config from
``<stackConfigDir>/Pulumi.<stack>.yaml`` as ``<namespace>:<key>`` strings),
with :mod:`nodewright.preview.mocks` answering resources and invokes. Pulumi's runtime state is
process-global: :func:`run_program` resets it before every run, so several runs in one process
are independent (the tests rely on it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi import _types as _pulumi_types
from pulumi.runtime import resource as _pulumi_resource
from pulumi.runtime import resource_cycle_breaker as _cycle_breaker
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from nodewright import reader, redact
from nodewright.errors import InputError
from nodewright.preview.mocks import (
    CapturingMonitor,
    InvokeRecord,
    PreviewMocks,
    RecordedRegistration,
    load_ssm_fixture,
)

log = logging.getLogger("nodewright")

SECURE_PLACEHOLDER = "<<secret:{key}>>"


@dataclass(frozen=True, kw_only=True)
class StackConfig:
    """A stack's name, project, directory and flattened config (``ns:key`` -> string)."""

    project: str
    stack: str
    project_dir: Path
    stack_file: Path | None
    config: dict[str, str]
    secret_keys: frozenset[str]
    program: Path | None = None
    """The program file the language host runs (``main:`` of Pulumi.yaml, else ``__main__.py``)."""


@dataclass(frozen=True, kw_only=True)
class OutputValue:
    value: Any
    secret: bool
    known: bool


@dataclass(kw_only=True)
class ProgramRun:
    """Everything the program registered, in a deterministic order."""

    stack: StackConfig
    registrations: list[RecordedRegistration]
    outputs: dict[str, OutputValue]
    invokes: list[InvokeRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the program said with ``pulumi.log.warn`` (shown as warnings by the real engine)."""


class _NoteHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.notes.append(record.getMessage())


def find_project_dir(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding ``Pulumi.yaml``."""
    here = start.resolve()
    for d in (here, *here.parents):
        if (d / "Pulumi.yaml").is_file():
            return d
    raise InputError(
        "no Pulumi.yaml here or in any parent directory; run from your nodewright repository, "
        "pass --project-dir, or start one with `nodewright init DIR`",
        file=str(start),
    )


def _project_at(project_dir: Path) -> Path:
    if not (project_dir / "Pulumi.yaml").is_file():
        raise InputError(
            "no Pulumi.yaml in this project directory; pass the directory holding it, "
            "or start one with `nodewright init DIR`",
            file=str(project_dir),
        )
    return project_dir.resolve()


def _program(project_dir: Path, project_file: Path, main: Any) -> Path:
    """The file the Python language host runs: ``main:`` (a file, or a directory with
    ``__main__.py``) relative to the project, else the project's ``__main__.py``."""
    target = project_dir / str(main) if main else project_dir
    program = target / "__main__.py" if target.is_dir() else target
    if not program.is_file():
        raise InputError(
            f"no Pulumi program at {program}; the project needs a __main__.py (`nodewright init` writes "
            "one that runs the packaged program)",
            file=str(project_file),
            path="main" if main else "",
        )
    return program


def _flatten_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return "" if value is None else str(value)


def load_stack(
    *,
    stack: str | None = None,
    stack_file: Path | None = None,
    cwd: Path | None = None,
    project_dir: Path | None = None,
) -> StackConfig:
    """Read the project file and the stack config file the way the Pulumi CLI does.

    ``project_dir`` is the directory holding ``Pulumi.yaml``; without it, the nearest one at or
    above the stack file's directory (``stack_file``) or ``cwd`` (default: the working directory)."""
    if stack_file is not None:
        if project_dir is None:
            project_dir = find_project_dir(stack_file.parent if stack_file.parent != Path("") else Path("."))
        name = stack_file.name
        stack_name = name[len("Pulumi.") : -len(".yaml")] if name.startswith("Pulumi.") else Path(name).stem
        path: Path | None = stack_file
    else:
        if project_dir is None:
            project_dir = find_project_dir(cwd or Path.cwd())
        stack_name = stack or "dev"
        path = None
    project_dir = _project_at(project_dir)
    project_file = project_dir / "Pulumi.yaml"
    project_doc = reader.load_yaml(reader.read_text(project_file), file=str(project_file)) or {}
    if not isinstance(project_doc, Mapping):
        raise InputError("expected a mapping (name, runtime, ...)", file=str(project_file))
    project = str(project_doc.get("name", "project"))
    if path is None:
        config_dir = project_dir / str(project_doc.get("stackConfigDir", "."))
        path = config_dir / f"Pulumi.{stack_name}.yaml"
        if not path.is_file():
            raise InputError(
                f"no stack config for stack {stack_name!r}; create {path} or pass --stack-file",
                file=str(path),
            )
    if not path.is_file():
        raise InputError("no such stack config file", file=str(path))
    doc = reader.load_yaml(reader.read_text(path), file=str(path)) or {}
    if not isinstance(doc, Mapping):
        raise InputError("expected a mapping with a config: section", file=str(path))
    raw = doc.get("config") or {}
    if not isinstance(raw, Mapping):
        raise InputError(
            "config must be a mapping of <namespace>:<key> to values", file=str(path), path="config"
        )
    config: dict[str, str] = {}
    secret: set[str] = set()
    for key, value in raw.items():
        full = str(key) if ":" in str(key) else f"{project}:{key}"
        if isinstance(value, Mapping) and set(value) == {"secure"}:
            config[full] = SECURE_PLACEHOLDER.format(key=full)
            secret.add(full)
            redact.mark_secret(str(value["secure"]))
        else:
            config[full] = _flatten_value(value)
    return StackConfig(
        project=project,
        stack=stack_name,
        project_dir=project_dir,
        stack_file=path.resolve(),
        config=config,
        secret_keys=frozenset(secret),
        program=_program(project_dir, project_file, project_doc.get("main")),
    )


@contextlib.contextmanager
def _in_project(project_dir: Path) -> Iterator[None]:
    old_cwd = Path.cwd()
    root = str(project_dir)
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
    os.chdir(project_dir)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        if added and root in sys.path:
            sys.path.remove(root)


def _add_dep_in_place(from_resource: Any, to_resource: Any) -> None:
    """``resource_cycle_breaker._add_dep`` without copying the set on every edge (pulumi rebuilds
    ``deps | {to}`` per edge: quadratic when a resource depends on a component of 2,000 children).
    The set is private to ``from_resource`` and never iterated while an edge is added."""
    deps = from_resource.__dict__.get(_cycle_breaker._DEPENDENCIES_PROPERTY)
    if deps is None:
        setattr(from_resource, _cycle_breaker._DEPENDENCIES_PROPERTY, {to_resource})
    else:
        deps.add(to_resource)


def _no_stack_trace() -> Any:
    """No source positions: the mock monitor drops them, and walking the stack per resource costs."""
    return source_pb2.StackTrace()


def _no_debug(*_args: Any, **_kwargs: Any) -> None:
    """Debug lines go nowhere here (the program's log keeps warnings only): not built at all."""


def _by_identity(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` (a pure function of a type annotation) answered once per annotation object. Keyed by
    identity, not equality (``Union[A, B] == Union[B, A]`` though unwrapping reads the order); the
    memo holds the annotation so its id stays its own."""
    memo: dict[int, tuple[Any, Any]] = {}

    def cached(val: Any) -> Any:
        hit = memo.get(id(val))
        if hit is None:
            hit = memo[id(val)] = (val, fn(val))
        return hit[1]

    return cached


# The private pulumi attributes the lean runtime replaces: (module, attribute, what it costs).
# Each is feature-detected: when a pulumi release renames or drops one, that patch is skipped with
# one warning (the preview stays correct, only slower), and tests/pulumi/test_lean_runtime.py fails
# so the change is seen in CI.
PRIVATE_PATCHES: tuple[tuple[Any, str, str], ...] = (
    (_cycle_breaker, "_add_dep", "cycle-breaker set copies"),
    (_cycle_breaker, "_DEPENDENCIES_PROPERTY", "cycle-breaker set copies"),
    (_pulumi_resource, "_get_stack_trace", "a stack walk per resource"),
    (_pulumi_types, "unwrap_type", "type introspection per property"),
    (_pulumi_types, "unwrap_optional_type", "type introspection per property"),
)


def missing_private_api() -> list[str]:
    """The private pulumi attributes the preview patches that this pulumi lacks (``module.attr``)."""
    return [f"{mod.__name__}.{attr}" for mod, attr, _ in PRIVATE_PATCHES if not hasattr(mod, attr)]


@contextlib.contextmanager
def _lean_runtime() -> Iterator[None]:
    """Costs of pulumi's runtime that only serve the real engine or repeat themselves, off while
    the mocks run: cycle-breaker set copies, stack traces, debug lines, re-deriving each property's
    type from its annotation (``typing`` introspection per property of every resource). A patch
    whose private attribute this pulumi lacks is skipped (see :data:`PRIVATE_PATCHES`)."""
    missing = set(missing_private_api())
    if missing:
        log.warning(
            "pulumi %s lacks %s: the preview runs without those speed-ups (nodewright is tested with "
            "the pulumi pinned in pyproject.toml)",
            getattr(pulumi, "__version__", "?"),
            ", ".join(sorted(missing)),
        )
    patches: list[tuple[Any, str, Any]] = [(pulumi.log, "debug", _no_debug)]
    if not missing & {
        f"{_cycle_breaker.__name__}._add_dep",
        f"{_cycle_breaker.__name__}._DEPENDENCIES_PROPERTY",
    }:
        patches.append((_cycle_breaker, "_add_dep", _add_dep_in_place))
    if f"{_pulumi_resource.__name__}._get_stack_trace" not in missing:
        patches.append((_pulumi_resource, "_get_stack_trace", _no_stack_trace))
    for attr in ("unwrap_type", "unwrap_optional_type"):
        if f"{_pulumi_types.__name__}.{attr}" not in missing:
            patches.append((_pulumi_types, attr, _by_identity(getattr(_pulumi_types, attr))))
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in patches]
    for mod, attr, value in patches:
        setattr(mod, attr, value)
    try:
        yield
    finally:
        for mod, attr, value in saved:
            setattr(mod, attr, value)


def _resolve_output(value: Any) -> OutputValue:
    out = pulumi.Output.from_input(value)
    known = bool(_sync_await(out.is_known()))
    secret = bool(_sync_await(out.is_secret()))
    resolved = _sync_await(out.future()) if known else None
    return OutputValue(value=resolved, secret=secret, known=known)


def run_program(stack: StackConfig, *, ssm_fixture: Path | None = None, light: bool = True) -> ProgramRun:
    """Run ``__main__.py`` of the stack's project under mocks; return what it registered.

    ``light`` takes :mod:`nodewright.preview.light` (the same registrations and outputs, less of
    pulumi's per-resource work); ``False``, or a pulumi lacking what it needs, takes pulumi's own
    ``MockMonitor`` path (the reference the light path is tested against)."""
    from nodewright.preview import light as _light
    from nodewright.preview import light_imports

    fixture_key = f"{stack.project}:ssmFixture"
    if ssm_fixture is None and stack.config.get(fixture_key):
        ssm_fixture = stack.project_dir / stack.config[fixture_key]
    if light and (missing := _light.missing_light_api() + light_imports.missing_import_api()):
        log.warning(
            "pulumi %s lacks %s: the preview takes pulumi's full mock path (nodewright is tested with "
            "the pulumi pinned in pyproject.toml)",
            getattr(pulumi, "__version__", "?"),
            ", ".join(missing),
        )
        light = False
    if light:
        light_imports.import_by_use()
    mocks = PreviewMocks(ssm_parameters=load_ssm_fixture(ssm_fixture))
    monitor = _light.LightMonitor(mocks) if light else CapturingMonitor(mocks)
    pulumi_settings.reset_options(project=stack.project, stack=stack.stack, preview=False)
    notes = _NoteHandler()
    engine_log = logging.Logger("nodewright.program")  # not registered: no propagation
    engine_log.addHandler(notes)
    pulumi.runtime.set_mocks(
        mocks, project=stack.project, stack=stack.stack, preview=False, logger=engine_log, monitor=monitor
    )
    pulumi.runtime.set_all_config(dict(stack.config), sorted(stack.secret_keys))
    pulumi_settings.SETTINGS.rpc_manager.clear()
    pulumi_settings.SETTINGS.outputs.clear()
    main = stack.program or stack.project_dir / "__main__.py"
    loop = _ensure_event_loop()  # type: ignore[no-untyped-call]
    path = _light.light_runtime(loop) if light else contextlib.nullcontext()
    try:
        with _in_project(stack.project_dir), _lean_runtime(), path:

            def program() -> None:
                runpy.run_path(str(main), run_name="__main__")

            _sync_await(run_pulumi_func(program))
            root = pulumi_settings.get_root_resource()
            exported: dict[str, Any] = dict(getattr(root, "outputs", {}) or {})
            outputs = {k: _resolve_output(v) for k, v in sorted(exported.items())}
    finally:
        if isinstance(monitor, _light.LightMonitor):
            monitor.close()
    registrations = sorted(monitor.registrations, key=lambda r: (r.urn, r.type, r.name))
    invokes = sorted(mocks.invokes, key=lambda i: (i.token, json.dumps(i.args, sort_keys=True)))
    return ProgramRun(
        stack=stack, registrations=registrations, outputs=outputs, invokes=invokes, notes=list(notes.notes)
    )
