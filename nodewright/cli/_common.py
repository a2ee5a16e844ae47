"""Shared CLI plumbing: the ``-o`` option, printing in every format, and the error contract."""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, ParamSpec, TypeVar

import click

from nodewright import redact
from nodewright.errors import InputError, NodewrightError, UsageError, clip
from nodewright.reader import dump_json, dump_yaml

P = ParamSpec("P")
R = TypeVar("R")

log = logging.getLogger("nodewright")


class _StderrHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        level = "warning" if record.levelno >= logging.WARNING else "info"
        click.echo(f"{level}: {record.getMessage()}", err=True)


PROGRESS = logging.getLogger("nodewright.progress")
"""Progress of long steps (first catalog build, big plans, the preview's program run): the core
logs them at INFO here; shown on stderr only when stderr is a terminal and ``-q`` is not given."""


class _ProgressHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        isatty = getattr(sys.stderr, "isatty", None)
        if callable(isatty) and isatty():
            click.echo(f"... {record.getMessage()}", err=True)


def setup_progress(*, quiet: bool) -> None:
    """Show progress lines on a terminal's stderr (never when ``quiet``, never into a pipe or file)."""
    for h in list(PROGRESS.handlers):
        if isinstance(h, _ProgressHandler):
            PROGRESS.removeHandler(h)
    PROGRESS.propagate = False
    PROGRESS.setLevel(logging.WARNING if quiet else logging.INFO)
    PROGRESS.disabled = False
    if not quiet:
        PROGRESS.addHandler(_ProgressHandler())


def _setup_logging() -> None:
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        log.addHandler(_StderrHandler())
    log.setLevel(logging.WARNING)
    log.propagate = False
    # A host that ran logging.config.dictConfig (import-linter does) disables existing loggers.
    log.disabled = False


def output_option(
    choices: Sequence[str] = ("table", "json", "yaml"), default: str = "table"
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """The ``-o/--output`` option every command takes."""
    return click.option(
        "-o",
        "--output",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="Output format.",
    )


INPUT_PATH = click.Path(allow_dash=True)
"""An input: a YAML/JSON file, a directory of them, or ``-`` for standard input."""


def files_option(help: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """The repeatable ``-f/--filename`` option (YAML/JSON file, directory or ``-``), as ``files``."""
    return click.option("-f", "--filename", "files", multiple=True, required=True, type=INPUT_PATH, help=help)


CLUSTER_HELP = (
    "Cluster state: `nodewright cluster snapshot` output or kubectl lists (List, NodeList, PodList...); "
    "a file, a directory of them, or - for stdin."
)


def time_option(name: str, value: str | None) -> datetime | None:
    """An RFC 3339 option value as an aware datetime; a usage-style one-line error otherwise."""
    if value is None:
        return None
    from nodewright.drift.detect import parse_time

    when = parse_time(value)
    if when is None:
        raise InputError(
            f"{name} {value!r} is not an RFC 3339 timestamp such as 2024-05-01T12:00:00Z", file="<args>"
        )
    return when


def at_option(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--at RFC3339``: the one time a command judges time by (``what`` it drives), default now;
    ``--now`` is its hidden former name. The command gets ``at`` (str or None): pass it to
    :func:`resolve_at`."""

    def remember_now(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.meta["nodewright.now"] = value

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        fn = click.option(
            "--now", default=None, hidden=True, expose_value=False, callback=remember_now,
            help="Former name of --at.",
        )(fn)  # fmt: skip
        return click.option(
            "--at", default=None, help=f"Evaluation time (RFC 3339) for {what}; default: the current time."
        )(fn)

    return decorate


def resolve_at(at: str | None) -> datetime:
    """The time of ``--at`` (or its former name ``--now``), else the current time (UTC)."""
    from datetime import UTC

    ctx = click.get_current_context(silent=True)
    now = ctx.meta.get("nodewright.now") if ctx is not None else None
    if at is not None and now is not None and at != now:
        raise click.UsageError("--now is the former name of --at: give one of them")
    value = at if at is not None else now
    when = time_option("--at" if at is not None or now is None else "--now", value)
    return when or datetime.now(UTC)


def format_at(when: datetime) -> str:
    """``when`` as RFC 3339 in UTC with ``Z`` (how outputs state the time they used)."""
    from datetime import UTC

    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def cluster_option(param: str = "cluster") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """The required ``--cluster`` option (file, directory or ``-``)."""
    return click.option("--cluster", param, required=True, type=INPUT_PATH, help=CLUSTER_HELP)


_SETTING_FLAGS: tuple[tuple[str, str, Any, str], ...] = (
    (
        "feature_gates",
        "--feature-gates",
        str,
        "Karpenter feature gates, Karpenter's syntax (NodeRepair=true,ReservedCapacity=false; env FEATURE_GATES).",
    ),
    (
        "preference_policy",
        "--preference-policy",
        click.Choice(["Respect", "Ignore"]),
        "Karpenter's PREFERENCE_POLICY: Respect or Ignore preferred affinities and ScheduleAnyway spreads.",
    ),
    (
        "min_values_policy",
        "--min-values-policy",
        click.Choice(["Strict", "BestEffort"]),
        "Karpenter's MIN_VALUES_POLICY: Strict or BestEffort (relax minValues when unsatisfiable).",
    ),
    (
        "reserved_enis",
        "--reserved-enis",
        str,
        "The provider's RESERVED_ENIS: ENIs left out of max-pods and kube-reserved [default: 0].",
    ),
    (
        "vm_memory_overhead_percent",
        "--vm-memory-overhead-percent",
        str,
        "The provider's VM_MEMORY_OVERHEAD_PERCENT, a fraction [default: 0.075].",
    ),
    (
        "ignore_dra_requests",
        "--ignore-dra-requests",
        click.Choice(["true", "false"]),
        "Karpenter's IGNORE_DRA_REQUESTS [default: true].",
    ),
)


_METAVARS: dict[str, str] = {
    "feature_gates": "GATES",
    "reserved_enis": "N",
    "vm_memory_overhead_percent": "FRACTION",
}


_CHOICE_KEY = "nodewright.karpenter-choice"


def settings_with_snapshot(settings: Any, release: Any, state: Any, *, where: str = "--cluster") -> Any:
    """``settings`` with the running controller's settings that ``state`` (a ``cluster snapshot``)
    recorded laid beneath the flags and the environment (flag > environment > snapshot > default):
    a forecast uses the cluster's own Karpenter settings unless told otherwise."""
    from nodewright.cluster import snapshot_settings

    snapshot = snapshot_settings(state)
    ctx = click.get_current_context(silent=True)
    choice = ctx.meta.get(_CHOICE_KEY) if ctx is not None else None
    if not snapshot or choice is None:
        return settings
    try:
        return choice.settings(snapshot=snapshot, release=release)
    except NodewrightError as exc:
        message = exc.message if isinstance(exc, InputError) else str(exc)
        raise InputError(
            f"{message} (the Karpenter settings the snapshot recorded; a flag or Karpenter's environment "
            "variable overrides them)",
            file=where,
            path="ClusterSnapshot.karpenter.settings",
        ) from exc


def karpenter_options(*, stack: bool = False) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """``--karpenter-version`` and Karpenter's settings flags, resolved ONCE into values.

    The command receives ``release: Release`` and ``settings: KarpenterSettings`` (flag >
    environment (``os.environ``, Karpenter's names: FEATURE_GATES, RESERVED_ENIS, ...) > default);
    with ``stack=True`` it receives ``karpenter: KarpenterChoice`` instead, and resolves it against
    the stack it reads (flag > environment > stack > default; a flag and a stack naming different
    releases is a usage error). Invalid values are usage errors (exit 2) naming the setting.
    """

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> R:
            import os

            from nodewright import crd
            from nodewright.crd import KarpenterChoice

            version = kwargs.pop("karpenter_version", None)
            flags = {attr: kwargs.pop(attr, None) for attr, *_ in _SETTING_FLAGS}
            choice = KarpenterChoice(version=version, flags=flags, env=dict(os.environ))
            try:
                if stack:  # flags and environment are checked before any file is read
                    if version is not None:
                        crd.release(version)
                    choice.settings()
                    kwargs["karpenter"] = choice
                else:
                    kwargs["release"] = release = choice.release()
                    kwargs["settings"] = choice.settings(release=release)
                    ctx = click.get_current_context(silent=True)
                    if ctx is not None:
                        ctx.meta[_CHOICE_KEY] = choice
            except NodewrightError as exc:
                click.echo(f"error: {exc.lines()[0]}", err=True)
                sys.exit(2)
            return fn(*args, **kwargs)

        from nodewright import crd

        for attr, flag, kind, help_text in reversed(_SETTING_FLAGS):
            metavar = _METAVARS.get(attr)
            wrapper = click.option(flag, attr, type=kind, default=None, metavar=metavar, help=help_text)(
                wrapper
            )
        return click.option(
            "--karpenter-version",
            "karpenter_version",
            default=None,
            help=f"Karpenter release (CRDs, hash versions, policies' expectations) [default: the stack's "
            f"nodewright:karpenterVersion, else {crd.DEFAULT_VERSION}; supported: "
            f"{', '.join(crd.supported_versions())}].",
        )(wrapper)

    return decorate


class _RedactingStream:
    """stdout/stderr of a command: every write goes through :func:`nodewright.redact.redact`."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(redact.redact(text) if isinstance(text, str) else text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def echo_secret(text: str, *, nl: bool = True) -> None:
    """Print ``text`` unredacted (only for output the user asked for in clear, e.g. --show-secrets)."""
    out = sys.stdout
    click.echo(text, file=out.stream if isinstance(out, _RedactingStream) else out, nl=nl)


@contextlib.contextmanager
def redacted_output() -> Iterator[None]:
    """The output boundary: while a command runs, nothing reaches stdout/stderr unredacted."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = _RedactingStream(out)
    sys.stderr = _RedactingStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn nodewright errors into ``error:`` lines and exit 1; never print a traceback.

    Everything the command prints, results, warnings and errors alike, is redacted of secrets.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        _setup_logging()
        gc_was_on = gc.isenabled()
        gc.disable()  # large inputs are acyclic trees: the cyclic GC only burns CPU scanning them
        try:
            with redacted_output():
                return _run(fn, *args, **kwargs)
        finally:
            if gc_was_on:
                gc.enable()

    return wrapper


def _run(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    try:
        return fn(*args, **kwargs)
    except UsageError as exc:
        click.echo(f"error: {exc.lines()[0]}", err=True)
        sys.exit(2)
    except NodewrightError as exc:
        for line in exc.lines():
            click.echo(f"error: {line}", err=True)
        sys.exit(1)
    except click.exceptions.Exit:
        raise
    except click.ClickException:
        raise
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # a bug: still one line, with a pointer to report it
        click.echo(
            f"error: internal error ({type(exc).__name__}: {clip(str(exc), 200)}); please report it with the input that caused it",
            err=True,
        )
        sys.exit(1)


def emit(
    data: Any,
    output: str,
    *,
    table: Callable[[], str] | None = None,
    markdown: Callable[[], str] | None = None,
) -> None:
    """Print ``data`` in the chosen format; ``table``/``markdown`` render the human forms."""
    if output == "json":
        click.echo(dump_json(data))
    elif output == "yaml":
        click.echo(dump_yaml(data), nl=False)
    elif output == "markdown" and markdown is not None:
        click.echo(markdown())
    elif table is not None:
        click.echo(table())
    else:
        click.echo(dump_json(data))


def load_cluster_info(info_file: str) -> Any:
    """The validated :class:`~nodewright.userdata.ClusterInfo` of an ``INFO.yaml`` file."""
    from nodewright.api.documents import read_input
    from nodewright.errors import InputError
    from nodewright.reader import parse_text
    from nodewright.userdata.launch import cluster_info_from_mapping

    raws = parse_text(read_input(info_file), file=info_file)
    if len(raws) != 1:
        raise InputError("expected one YAML document with the cluster facts", file=info_file)
    return cluster_info_from_mapping(raws[0], file=info_file)
