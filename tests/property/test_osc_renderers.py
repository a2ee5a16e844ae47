"""Properties of the OSC renderers: any file round-trips through cloud-init, Ignition and bash
(bash for real), heredoc delimiters never collide, placeholders stay contiguous clear text."""

from __future__ import annotations

import base64
import json
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodewright.osc.nodeplan import NodePlan, PlannedFile, is_clear_text
from nodewright.osc.render_bash import _PRELUDE, delimiter_for, render_bash, write_command
from nodewright.osc.render_cloudinit import render_cloudinit
from nodewright.osc.render_ignition import render_ignition

PLACEHOLDERS = ("<<BOOTSTRAP_TOKEN>>", "<<MACHINE_NAME>>")
segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))
paths = st.lists(segment, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))
modes = st.integers(min_value=0, max_value=0o777)
tokens = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(
        ["\n", "NODEWRIGHT_EOF\n", "\nNODEWRIGHT_EOF_1\n", "EOF", "$HOME", "`", "'", '"', "\\", " "]
    ),
)
texts = st.lists(tokens, max_size=12).map("".join)
datas = st.one_of(st.binary(max_size=300), texts.map(lambda t: t.encode("utf-8")))


@st.composite
def planned_files(draw: st.DrawFn) -> PlannedFile:
    data = draw(datas)
    clear = is_clear_text(data) and draw(st.booleans())
    return PlannedFile(path=draw(paths), data=data, mode=draw(modes), clear=clear)


def _plan(files: list[PlannedFile]) -> NodePlan:
    unique = {f.path: f for f in files}
    return NodePlan(name="p", namespace=None, purpose="provision", files=tuple(unique.values()), units=())


@settings(max_examples=150, deadline=None)
@given(st.lists(planned_files(), min_size=1, max_size=5))
def test_cloudinit_round_trips_every_file(files: list[PlannedFile]) -> None:
    plan = _plan(files)
    text = render_cloudinit(plan)
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    entries = doc["write_files"]
    assert len(entries) == len(plan.files)
    for f, e in zip(plan.files, entries, strict=True):
        assert e["path"] == f.path
        assert e["permissions"] == f"{f.mode:04o}" and isinstance(e["permissions"], str)
        got = base64.b64decode(e["content"]) if e.get("encoding") == "b64" else e["content"].encode("utf-8")
        assert got == f.data


@settings(max_examples=150, deadline=None)
@given(st.lists(planned_files(), min_size=1, max_size=5))
def test_ignition_round_trips_every_file(files: list[PlannedFile]) -> None:
    plan = _plan(files)
    cfg = json.loads(render_ignition(plan))
    assert cfg["ignition"]["version"] == "3.3.0"
    for f, e in zip(plan.files, cfg["storage"]["files"], strict=True):
        assert e["path"] == f.path and e["mode"] == f.mode and e["overwrite"] is True
        source = e["contents"]["source"]
        if source.startswith("data:;base64,"):
            got = base64.b64decode(source.removeprefix("data:;base64,"))
        else:
            assert source.startswith("data:,") and "+" not in source and " " not in source
            got = unquote_to_bytes(source.removeprefix("data:,"))
        assert got == f.data


@settings(max_examples=300, deadline=None)
@given(texts)
def test_heredoc_delimiter_never_collides(body: str) -> None:
    delim = delimiter_for(body)
    assert delim not in body.split("\n")
    command = write_command("/x", body.encode("utf-8"), mode=0o644, clear=is_clear_text(body.encode("utf-8")))
    if body and is_clear_text(body.encode("utf-8")):
        head, _, rest = command.partition("\n")
        used = head.rsplit("<< ", 1)[1].strip("'")
        lines = rest.split("\n")
        assert lines.index(used) == len(lines) - 2, "the delimiter ends the heredoc, not earlier"


BASH = shutil.which("bash")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(planned_files(), min_size=1, max_size=4))
def test_bash_writes_exact_bytes_and_modes_for_real(files: list[PlannedFile]) -> None:
    if BASH is None:  # pragma: no cover - bash is on every CI image
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        moved = [
            PlannedFile(path=str(root / f"f{i}"), data=f.data, mode=f.mode | 0o600, clear=f.clear)
            for i, f in enumerate(files)
        ]
        script = (
            "set -o errexit -o nounset -o pipefail\n"
            + _PRELUDE
            + "".join(write_command(f.path, f.data, mode=f.mode, clear=f.clear) for f in moved)
        )
        run = subprocess.run([BASH, "-c", script], capture_output=True, check=False, timeout=60)
        assert run.returncode == 0, run.stderr
        for f in moved:
            target = Path(f.path)
            assert target.read_bytes() == f.data
            assert stat.S_IMODE(target.stat().st_mode) == f.mode


@st.composite
def texts_with_placeholders(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.one_of(texts, st.sampled_from(PLACEHOLDERS)), min_size=1, max_size=6))
    return "".join(pieces) + draw(st.sampled_from(PLACEHOLDERS))


@settings(max_examples=150, deadline=None)
@given(texts_with_placeholders(), paths)
def test_placeholders_stay_contiguous_clear_text_in_every_format(text: str, path: str) -> None:
    data = text.encode("utf-8")
    if not is_clear_text(data):
        return  # the planner refuses such content (tested in tests/osc); nothing to render
    plan = _plan([PlannedFile(path=path, data=data, mode=0o600, clear=True)])
    for placeholder in PLACEHOLDERS:
        expected = text.count(placeholder)
        ci = render_cloudinit(plan)
        assert yaml.safe_load(ci)["write_files"][0]["content"].count(placeholder) == expected
        assert ci.count(placeholder) >= expected, "placeholder folded or escaped in YAML"
        sh = render_bash(plan)
        assert sh.count(placeholder) == expected
        ign = render_ignition(plan)
        assert ign.count(quote(placeholder, safe="")) >= expected
