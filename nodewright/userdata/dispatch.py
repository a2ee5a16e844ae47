"""One entry point: render a family's user data from :class:`Options`, size-checked and redacted.

:func:`render` dispatches on the AMI family (``GetAMIFamily``: unknown families are AL2), checks the
16384-byte EC2 limit (warning at 90 %, as Karpenter's metrics code does; error above), and makes
sure no error or warning text carries the CA bundle in clear.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from nodewright.api.amifamily import (
    AL2023,
    BOTTLEROCKET,
    CUSTOM,
    USER_DATA_MAX_BYTES,
    USER_DATA_WARN_BYTES,
    WINDOWS_FAMILIES,
    renderer_family,
)
from nodewright.userdata.al2 import render_al2
from nodewright.userdata.al2023 import render_al2023
from nodewright.userdata.bottlerocket import render_bottlerocket
from nodewright.userdata.custom import render_custom, render_windows
from nodewright.userdata.options import Options, UserDataError

log = logging.getLogger("nodewright")

MAX_BYTES: Final = USER_DATA_MAX_BYTES
WARN_BYTES: Final = USER_DATA_WARN_BYTES

RENDERERS: Final[dict[str, Callable[[Options], str]]] = {
    AL2023: render_al2023,
    BOTTLEROCKET: render_bottlerocket,
    CUSTOM: render_custom,
    **{w: render_windows for w in WINDOWS_FAMILIES},
}


@dataclass(frozen=True)
class Rendered:
    """A rendered user data: the text (as the node receives it, decoded) and its family."""

    family: str
    text: str

    @property
    def size(self) -> int:
        return len(self.text.encode())


def is_within_size(text: str) -> bool:
    """True when the raw user data fits EC2's 16384-byte limit."""
    return len(text.encode()) <= MAX_BYTES


def check_size(text: str, *, user_part: str | None = None) -> None:
    """Raise over 16384 bytes; warn at 90 % and more (Karpenter's ``userDataWarnBytes``)."""
    size = len(text.encode())
    if size > MAX_BYTES:
        mine = f"; spec.userData alone is {len(user_part.encode())} bytes" if user_part else ""
        raise UserDataError(
            f"the rendered user data is {size} bytes, {size - MAX_BYTES} over EC2's {MAX_BYTES}-byte limit{mine}: "
            "move large files to S3 or SSM Parameter Store and fetch them from a short script"
        )
    if size >= WARN_BYTES:
        log.warning(
            "the rendered user data is %d bytes, %d%% of EC2's %d-byte limit; keep spec.userData small",
            size,
            size * 100 // MAX_BYTES,
            MAX_BYTES,
        )


def render(family: str, options: Options) -> Rendered:
    """The decoded user data the family produces for ``options`` (errors never show the CA bundle)."""
    resolved = renderer_family(family)
    renderer = RENDERERS.get(resolved, render_al2)
    try:
        user = options.custom_user_data
        if user is not None and not is_within_size(user):
            raise UserDataError(
                f"spec.userData is {len(user.encode())} bytes, over EC2's {MAX_BYTES}-byte user-data limit before "
                "Karpenter adds its bootstrap: move large content to S3 or SSM Parameter Store and fetch it from a short script"
            )
        text = renderer(options)
        check_size(text, user_part=options.custom_user_data)
    except UserDataError as exc:
        raise UserDataError(options.redact(exc.message), path=exc.path) from None
    return Rendered(family=resolved, text=text)
