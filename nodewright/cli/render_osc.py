"""`nodewright render osc` (see docs/cli.md): an OperatingSystemConfig as user data.

Thin: load the OSC (and any Secrets in the same files), call :func:`nodewright.osc.render_osc`,
print. ``-o raw`` prints the user data exactly (no added newline); ``-o json`` prints
``{format, bytes, content, name, purpose, initPattern, placeholders, secretFiles, ...}``.
Extensions beyond the contract: several ``-f``, ``--name``, ``--host-name``, ``--api-server`` /
``--ca-file`` / ``--secret-namespace`` for the init-script pattern, ``--previous`` (reconcile diff).
"""

from __future__ import annotations

from pathlib import Path

import click

from nodewright.cli._common import emit, handle_errors, output_option
from nodewright.errors import InputError
from nodewright.osc import FORMATS, InitOptions, load_osc, render_osc


@click.command("osc")
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    required=True,
    type=click.Path(allow_dash=True, path_type=Path),
    help="OperatingSystemConfig YAML/JSON (Secrets for secretRef files may be in the same or other -f files).",
)
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), required=True, help="User-data format.")
@click.option("--name", default=None, help="Which OperatingSystemConfig, when the files hold several.")
@click.option("--host-name", default=None, help="Include files restricted to this hostName.")
@click.option("--api-server", default=None, help="API server URL the init-script pattern fetches from.")
@click.option(
    "--ca-file",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="CA bundle of --api-server (PEM).",
)
@click.option(
    "--secret-namespace", default="kube-system", show_default=True, help="Namespace of osc-result-<name>."
)
@click.option(
    "--previous",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Previously applied OSC: add the reconcile changes (units to restart, files changed) to -o json.",
)
@output_option(("raw", "json"), default="raw")
@handle_errors
def command(
    files: tuple[Path, ...],
    fmt: str,
    name: str | None,
    host_name: str | None,
    api_server: str | None,
    ca_file: Path | None,
    secret_namespace: str,
    previous: Path | None,
    output: str,
) -> None:
    """Render a Gardener OperatingSystemConfig as cloud-init, bash or Ignition user data."""
    loaded = load_osc(files, name=name)
    init: InitOptions | None = None
    if api_server is not None:
        ca: bytes | None = None
        if ca_file is not None:
            try:
                ca = ca_file.read_bytes()
            except OSError as exc:
                raise InputError(f"cannot read CA file: {exc.strerror}", file=str(ca_file)) from exc
        init = InitOptions(api_server=api_server, ca_bundle=ca, namespace=secret_namespace)
    elif ca_file is not None:
        raise InputError("--ca-file needs --api-server", file=str(ca_file))
    prior = load_osc([previous], name=loaded.osc.name) if previous is not None and output == "json" else None
    result = render_osc(loaded, fmt, init=init, host_name=host_name, previous=prior)  # type: ignore[arg-type]
    if output == "raw":
        click.echo(result.content, nl=False)
        return
    emit(result.as_dict(), "json")
