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
from nodewright.errors import InputError, NodewrightError, clip
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


def _select_release(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from nodewright import crd

    try:
        return crd.select(value).version if value is not None else crd.selected().version
    except NodewrightError as exc:
        raise click.BadParameter(
            f"unsupported Karpenter version {value!r}; supported: {', '.join(crd.supported_versions())}"
        ) from exc


def karpenter_version_option() -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--karpenter-version``: the Karpenter release whose CRDs validate and default the objects
    (and whose hash versions apply); see README "Karpenter releases". Not passed to the command."""
    from nodewright import crd

    return click.option(
        "--karpenter-version",
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_select_release,
        help=f"Karpenter release to validate against (default {crd.DEFAULT_VERSION}; supported: "
        f"{', '.join(crd.supported_versions())}).",
    )


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
