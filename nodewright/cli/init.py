"""``nodewright init DIR``: scaffold a repository that runs nodewright from the installed package.

Thin: call :func:`nodewright.scaffold.init_repository`, print what was written (see docs/cli.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from nodewright.cli._common import emit, handle_errors, log, output_option


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--force", is_flag=True, help="Write into a non-empty DIRECTORY (overwrites the template files)."
)
@click.option(
    "--action",
    default=None,
    metavar="OWNER/REPO@REF",
    help="nodewright's reusable action for the workflow (and the pre-commit hooks' repo@rev); "
    "pin it by commit SHA [default: nodewright/nodewright@v<version>].",
)
@click.option(
    "--requirement",
    default=None,
    help="pip requirement for nodewright in requirements.txt and CI [default: nodewright[live]==<version>].",
)
@output_option(("table", "json", "yaml"), default="table")
@handle_errors
def command(directory: Path, force: bool, action: str | None, requirement: str | None, output: str) -> None:
    """Create a repository for your NodePools: Pulumi project, dev stack, policy pack, CI workflow, pre-commit."""
    from nodewright.scaffold import init_repository

    done = init_repository(directory, force=force, action=action, requirement=requirement)
    if not done.pinned:
        log.warning(
            "the workflow uses %s by tag; pin it by commit SHA (--action OWNER/REPO@<sha>) so a moved "
            "tag cannot change what runs in CI",
            done.action,
        )
    data = {"directory": str(done.directory), "project": done.project, "files": list(done.files)}
    emit(
        data,
        output,
        table=lambda: "\n".join(
            [
                *(f"created {done.directory / f}" for f in done.files),
                "",
                f"next: cd {done.directory} && nodewright validate -f stacks/nodepools.yaml "
                "-f stacks/nodeclasses.yaml && nodewright preview --stack dev",
            ]
        ),
    )
