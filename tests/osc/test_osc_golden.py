"""Golden files: tests/data/osc/<case>.{yaml|json} -> <case>.cloud-init, <case>.bash, <case>.ign.

Every case is found by glob; a case without all three outputs, or an output without its input,
fails loudly. Regenerate with ``NODEWRIGHT_UPDATE_GOLDEN=1``. Every output also passes the real
validator of its format.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nodewright.osc import Format, load_osc, render_osc

DATA = Path(__file__).resolve().parents[1] / "data" / "osc"
SUFFIX: dict[str, Format] = {"cloud-init": "cloud-init", "bash": "bash", "ign": "ignition"}
INPUTS = sorted([*DATA.glob("*.yaml"), *DATA.glob("*.json")])
UPDATE = os.environ.get("NODEWRIGHT_UPDATE_GOLDEN") == "1"


def _cases() -> list[tuple[Path, str]]:
    return [(src, suffix) for src in INPUTS for suffix in SUFFIX]


def test_golden_cases_exist_and_are_complete() -> None:
    assert INPUTS, f"no golden inputs under {DATA}"
    stems = {p.stem for p in INPUTS}
    problems = []
    for src in INPUTS:
        for suffix in SUFFIX:
            if not (DATA / f"{src.stem}.{suffix}").exists() and not UPDATE:
                problems.append(f"{src.name}: missing {src.stem}.{suffix}")
    for out in sorted(p for s in SUFFIX for p in DATA.glob(f"*.{s}")):
        if out.name.rsplit(".", 1)[0] not in stems:
            problems.append(f"{out.name}: output without an input {out.stem}.yaml/.json")
    assert not problems, "golden halves missing:\n" + "\n".join(problems)


@pytest.mark.parametrize(("src", "suffix"), _cases(), ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_golden_render(src: Path, suffix: str) -> None:
    result = render_osc(load_osc([src]), SUFFIX[suffix])
    expected = DATA / f"{src.stem}.{suffix}"
    if UPDATE:
        expected.write_text(result.content, encoding="utf-8")
    assert expected.exists(), f"missing golden {expected.name}: run with NODEWRIGHT_UPDATE_GOLDEN=1"
    assert result.content == expected.read_text(encoding="utf-8"), f"{expected.name} differs"


@pytest.mark.parametrize("src", [p for p in INPUTS], ids=lambda p: p.stem)
def test_golden_cloudinit_valid(src: Path, validate_cloudinit: object) -> None:
    validate_cloudinit(DATA / f"{src.stem}.cloud-init")  # type: ignore[operator]


@pytest.mark.parametrize("src", [p for p in INPUTS], ids=lambda p: p.stem)
def test_golden_ignition_valid(src: Path, validate_ignition: object) -> None:
    validate_ignition(DATA / f"{src.stem}.ign")  # type: ignore[operator]


@pytest.mark.parametrize("src", [p for p in INPUTS], ids=lambda p: p.stem)
def test_golden_bash_valid(src: Path, validate_bash: object) -> None:
    validate_bash(DATA / f"{src.stem}.bash")  # type: ignore[operator]


@pytest.mark.parametrize("src", [p for p in INPUTS], ids=lambda p: p.stem)
def test_golden_full_config_of_init_pattern_is_valid_bash(
    src: Path, validate_bash: object, tmp_path: Path
) -> None:
    result = render_osc(load_osc([src]), "bash")
    if result.full_config is None:
        assert result.bytes <= 16384
        return
    path = tmp_path / "full.sh"
    path.write_text(result.full_config, encoding="utf-8")
    validate_bash(path)  # type: ignore[operator]
