"""``nodewright init``: a user's repository laid out as this one (the same program, pack and stacks).

The templates are package data (``nodewright/data/scaffold``): ``Pulumi.yaml``, a two-line
``__main__.py`` running the packaged program, ``requirements.txt`` (``nodewright[live]``), a
``dev`` stack with example NodePools, EC2NodeClasses and cluster facts, the ``policies/`` pack,
a GitHub workflow using nodewright's reusable action and a pre-commit config. A path component
``dot-X`` of a template is written as ``.X`` (wheels and globs drop dotfiles). ``@@NAME@@``
placeholders are the only substitution. Boundary: files only; nothing here imports pulumi or click.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from nodewright.errors import InputError

ACTION_REPOSITORY = "nodewright/nodewright"
"""Where nodewright's reusable action and pre-commit hooks live (``--action`` overrides it)."""
_ACTION = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)(?:/[\w./-]+)?@(?P<ref>[\w./-]+)$")
_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True, kw_only=True)
class Scaffold:
    """What :func:`init_repository` wrote."""

    directory: Path
    project: str
    files: tuple[str, ...]
    action: str
    pinned: bool
    """The action reference is a full commit SHA (tags can be moved; zizmor asks for a SHA)."""


def _templates() -> Traversable:
    return resources.files("nodewright").joinpath("data", "scaffold")


def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        name = "." + child.name[len("dot-") :] if child.name.startswith("dot-") else child.name
        rel = f"{prefix}{name}"
        if child.is_dir():
            out.extend(_walk(child, rel + "/"))
        else:
            out.append((rel, child))
    return out


def installed_version() -> str:
    """The installed nodewright's version (importlib.metadata); ``0.0.0`` from a bare source tree."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("nodewright")
    except PackageNotFoundError:
        return "0.0.0"


def project_name(directory: Path) -> str:
    """A Pulumi project name from the directory's name (letters, digits, ``-``, ``_``, ``.``)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", directory.resolve().name).strip("-.")
    return name or "nodewright"


def init_repository(
    directory: Path,
    *,
    version: str | None = None,
    force: bool = False,
    action: str | None = None,
    requirement: str | None = None,
) -> Scaffold:
    """Write the templates into ``directory`` (created if missing). A non-empty directory is refused
    unless ``force`` (then the templates' files are overwritten and other files kept).

    ``action`` is ``OWNER/REPO@REF`` of nodewright's reusable action (default the release tag of
    ``version`` in :data:`ACTION_REPOSITORY`); its repository and ref also serve the pre-commit
    hook. ``requirement`` is the pip requirement written to requirements.txt and the workflow;
    ``version`` defaults to the installed distribution's."""
    version = version or installed_version()
    if directory.exists() and not directory.is_dir():
        raise InputError("not a directory; give a new or empty directory", file=str(directory))
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise InputError(
            "directory is not empty; give a new or empty directory, or --force to write the "
            "templates into it (their files are overwritten, others kept)",
            file=str(directory),
        )
    ref = action or f"{ACTION_REPOSITORY}@v{version}"
    m = _ACTION.match(ref)
    if m is None:
        raise InputError(
            f"--action {ref!r} is not OWNER/REPO@REF (e.g. {ACTION_REPOSITORY}@<commit sha>)", file="<args>"
        )
    pinned = bool(_SHA.match(m["ref"]))
    uses = f"{ref}  # v{version}" if pinned else ref
    values = {
        "@@PROJECT@@": project_name(directory),
        "@@REQUIREMENT@@": requirement or f"nodewright[live]=={version}",
        "@@ACTION@@": uses,
        "@@HOOKS_REPO@@": f"https://github.com/{m['repo']}",
        "@@HOOKS_REV@@": m["ref"],
    }
    written: list[str] = []
    for rel, source in _walk(_templates()):
        text = source.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace(key, value)
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(rel)
    return Scaffold(
        directory=directory, project=values["@@PROJECT@@"], files=tuple(written), action=ref, pinned=pinned
    )


__all__ = ["ACTION_REPOSITORY", "Scaffold", "init_repository", "installed_version", "project_name"]
