"""One error hierarchy for nodewright.

Every error a user can cause carries where it happened (file and JSON path) and what to do about
it, so the CLI prints one line per problem: ``error: <file>:<path>: <what is wrong>``. Validators
collect every problem into an :class:`InputErrors` before raising, rather than stopping at the
first. Causes from libraries (PyYAML, tomlkit, botocore) are chained, never printed as tracebacks.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final


class NodewrightError(Exception):
    """Base of every error nodewright raises on purpose."""

    def lines(self) -> list[str]:
        """The error as the one or more lines the CLI prints (without the ``error: `` prefix)."""
        return [str(self)]


MAX_MESSAGE: Final = 400


def clip(value: str, limit: int = 80) -> str:
    """``value`` cut to ``limit`` characters (with how much was cut), for echoing input in errors."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}…({len(value) - limit} more characters)"


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One thing wrong with one place of one input."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{clip(self.file, 200)}:{clip(self.path, 200)}" if self.path else clip(self.file, 200)
        return f"{where}: {clip(self.message, MAX_MESSAGE)}"


class InputError(NodewrightError):
    """Bad user input at one place: a file, a JSON path inside it, and what to do."""

    def __init__(self, message: str, *, file: str = "<input>", path: str = "") -> None:
        self.problem = Problem(file=file, path=path, message=message)
        super().__init__(str(self.problem))

    @property
    def file(self) -> str:
        return self.problem.file

    @property
    def path(self) -> str:
        return self.problem.path

    @property
    def message(self) -> str:
        return self.problem.message


class UsageError(InputError):
    """The command line (or the environment it runs in) asks for something impossible or
    contradictory: the CLI prints the one line and exits 2, as for a bad option."""


class InputErrors(NodewrightError):
    """Several problems found by one validation pass; every one is reported."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)


class Collector:
    """Collects problems across a validation pass, then raises them all at once."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(Problem(file=self.file, path=path, message=message))

    def extend(self, problems: Iterable[Problem]) -> None:
        self.problems.extend(problems)

    def raise_if_any(self) -> None:
        if len(self.problems) == 1:
            p = self.problems[0]
            raise InputError(p.message, file=p.file, path=p.path)
        if self.problems:
            raise InputErrors(self.problems)


class SchedulingError(NodewrightError):
    """A pod cannot be scheduled; the message is Karpenter's text for the same decision."""


class RenderError(NodewrightError):
    """User data or an OperatingSystemConfig cannot be rendered (bad MIME, TOML, size...)."""


class CatalogError(NodewrightError):
    """The instance-type catalog cannot be loaded."""


def typo_hint(value: str, choices: Iterable[str]) -> str:
    """`` (typo of "X"?)`` when ``value`` is close to one of ``choices``, else ``""``."""
    options = list(choices)
    for option in options:
        if option.lower() == value.lower() and option != value:
            return f' (typo of "{option}"?)'
    match = difflib.get_close_matches(value, options, n=1, cutoff=0.75)
    return f' (typo of "{match[0]}"?)' if match and match[0] != value else ""
