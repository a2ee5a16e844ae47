"""Mutation fuzzing of every command's inputs through the CLI, in process (bounded, fast: CI runs it).

Each example starts from a valid input of the command (the example stack's files), applies a few
mutations, textual (drop/duplicate/truncate a line, indentation, a hostile scalar, an alias bomb,
deep nesting, invalid UTF-8) or structural (a value anywhere replaced by a hostile one or another
type, a key dropped), and runs the command. Whatever the input:

* no traceback: the exit code is 0, 1 or 2, stderr has neither ``Traceback`` nor ``internal error``;
* no hang: every example has a deadline;
* every error is located: each ``error:`` line names a place (``error: <file>:...``), never
  ``<input>`` and never an empty location.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodewright.cli import main

REPO = Path(__file__).resolve().parent.parent
HOSTILE: list[Any] = [
    "1e400",
    "1" * 401,
    1e300,
    -1,
    0,
    "x",
    "",
    None,
    [],
    {},
    [1, 2],
    {"a": "b"},
    "demo'; touch /tmp/x; '",
    "q7x2mz.4f8k1p0c9d3b6a5e",
    "9" * 30,
    "-5Gi",
    "1Ei",
    "x" * 5000,
    True,
    "\u2028",
]
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)
DEEP = "a: " + "[" * 1000 + "]" * 1000 + "\n"


def _cluster_seed() -> str:
    doc = json.loads((REPO / "stacks/examples/cluster.json").read_text())
    kinds: dict[str, int] = {}
    items = []
    for item in doc["items"]:  # a few of each kind keeps every example fast
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
        if kinds[item["kind"]] <= 4:
            items.append(item)
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _set(node: Any, path: tuple[Any, ...], value: Any, *, drop: bool = False) -> None:
    for part in path[:-1]:
        node = node[part]
    if drop and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> bytes:
    """``seed`` with one to three mutations applied."""
    text = seed
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["structure", "structure", "drop-key", "line", "truncate", "special"]))
        if op in ("structure", "drop-key"):
            if "&" in text or "[[[" in text:
                continue  # no structural edits on bombs (the mutator itself must stay cheap)
            try:
                docs = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
            except (yaml.YAMLError, RecursionError, ValueError):
                continue
            paths = [(i, p) for i, d in enumerate(docs) for p in _paths(d)]
            if not paths:
                continue
            i, path = draw(st.sampled_from(paths))
            _set(docs[i], path, draw(st.sampled_from(HOSTILE)), drop=op == "drop-key")
            text = yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)
        elif op == "line":
            lines = text.splitlines()
            if not lines:
                continue
            n = draw(st.integers(0, len(lines) - 1))
            how = draw(st.sampled_from(["drop", "dup", "indent", "dedent", "scalar"]))
            if how == "drop":
                del lines[n]
            elif how == "dup":
                lines.insert(n, lines[n])
            elif how == "indent":
                lines[n] = "  " + lines[n]
            elif how == "dedent":
                lines[n] = lines[n].lstrip()
            else:
                lines[n] = re.sub(r":\s.*$", ": " + str(draw(st.sampled_from(HOSTILE[:8]))), lines[n])
            text = "\n".join(lines) + "\n"
        elif op == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        else:
            text = draw(st.sampled_from([ALIAS_BOMB, DEEP, text + "\n---\n" + DEEP, text + "\nkind: [\n"]))
    raw = text.encode()
    if draw(st.integers(0, 20)) == 0:
        raw = raw[: len(raw) // 2] + b"\xff\xfe" + raw[len(raw) // 2 :]
    return raw


LOCATED = re.compile(r"^error: (?!<input>)[^\s:][^:]*(:[^ ]*)?: \S")


def _check(result: Any) -> None:
    err = result.stderr
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in err and "internal error" not in err, err
    for line in err.splitlines():
        if line.startswith("error:"):
            assert LOCATED.match(line), line
            assert len(line) < 2000, line[:200]


FAST = settings(
    max_examples=int(os.environ.get("NODEWRIGHT_FUZZ_EXAMPLES", "25")),
    deadline=15_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
SEEDS = {
    "nodepools": (REPO / "stacks/nodepools.yaml").read_text(),
    "nodeclasses": (REPO / "stacks/nodeclasses.yaml").read_text(),
    "info": (REPO / "stacks/cluster-info.yaml").read_text(),
    "osc": (REPO / "stacks/osc/provision-node-init.yaml").read_text(),
    "catalog": (REPO / "tests/data/catalogs/fake.yaml").read_text(),
    "cluster": _cluster_seed(),
}


def _files(tmp: Path, **overrides: bytes) -> dict[str, str]:
    out = {}
    for name, seed in SEEDS.items():
        ext = "json" if name == "cluster" else "yaml"
        path = tmp / f"{name}.{ext}"
        path.write_bytes(overrides.get(name, seed.encode()))
        out[name] = str(path)
    return out


COMMANDS = {
    "validate": ("nodepools", lambda f: ["validate", "-f", f["nodepools"], "-f", f["nodeclasses"]]),
    "validate-classes": ("nodeclasses", lambda f: ["validate", "-f", f["nodeclasses"], "-o", "json"]),
    "hash": ("nodepools", lambda f: ["hash", "-f", f["nodepools"], "-o", "json"]),
    "plan": ("cluster", lambda f: ["plan", "-f", f["nodepools"], "--cluster", f["cluster"], "-o", "json"]),
    "plan-pools": ("nodepools", lambda f: ["plan", "-f", f["nodepools"], "--cluster", f["cluster"]]),
    "drift": ("cluster", lambda f: ["drift", "-f", f["nodepools"], "--cluster", f["cluster"], "-o", "json"]),
    "drift-pools": ("nodepools", lambda f: ["drift", "-f", f["nodepools"], "--cluster", f["cluster"]]),
    "health": ("cluster", lambda f: ["health", "--cluster", f["cluster"], "-o", "json"]),
    "disrupt": ("cluster", lambda f: ["disrupt", "-f", f["nodepools"], "--cluster", f["cluster"], "--catalog", f["catalog"], "-o", "json"]),
    "disrupt-pools": ("nodepools", lambda f: ["disrupt", "-f", f["nodepools"], "--cluster", f["cluster"], "--catalog", f["catalog"], "--until-quiet"]),
    "catalog-nodeclass": ("nodeclasses", lambda f: ["catalog", "list", "--nodeclass", f["nodeclasses"], "--catalog", f["catalog"]]),
    "catalog-file": ("catalog", lambda f: ["catalog", "list", "--catalog", f["catalog"], "-o", "json"]),
    "render-userdata-info": ("info", lambda f: _userdata(f)),
    "render-userdata-class": ("nodeclasses", lambda f: _userdata(f)),
    "render-userdata-pool": ("nodepools", lambda f: _userdata(f)),
    "render-osc": ("osc", lambda f: ["render", "osc", "-f", f["osc"], "--format", "cloud-init"]),
}  # fmt: skip


def _userdata(f: dict[str, str]) -> list[str]:
    return ["render", "userdata", "-f", f["nodeclasses"], "--nodepool", f["nodepools"], "--nodepool-name", "default",
            "--cluster-info", f["info"], "--catalog", f["catalog"], "--instance-type", "default-instance-type", "-o", "json"]  # fmt: skip


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_traceback_no_hang_located_errors(name: str, tmp_path: Path) -> None:
    target, argv = COMMANDS[name]

    @FAST
    @given(data=mutated(SEEDS[target]))
    def run(data: bytes) -> None:
        files = _files(tmp_path, **{target: data})
        _check(CliRunner().invoke(main, argv(files)))

    run()


def test_preview_survives_hostile_stacks(tmp_path: Path) -> None:
    """The preview of a stack whose files are mutated (a few examples: a preview takes a second).

    The project is linked into a temporary directory, so the stack files live outside the repo."""
    for name in ("Pulumi.yaml", "__main__.py", "nodewright_pulumi", "policies", "nodewright"):
        (tmp_path / name).symlink_to(REPO / name)
    base = (REPO / "stacks/Pulumi.dev.yaml").read_text()
    for rel in ("stacks/nodeclasses.yaml", "stacks/osc/provision-node-init.yaml"):
        base = base.replace(rel, str(REPO / rel))
    base = base.replace("stacks/examples/cluster.json", str(REPO / "stacks/examples/cluster.json"))

    @settings(FAST, max_examples=6)
    @given(pools=mutated(SEEDS["nodepools"]), which=st.sampled_from(["pools", "stack"]))
    def run(pools: bytes, which: str) -> None:
        (tmp_path / "np.yaml").write_bytes(pools if which == "pools" else SEEDS["nodepools"].encode())
        text = base.replace("stacks/nodepools.yaml", str(tmp_path / "np.yaml"))
        stack = tmp_path / "Pulumi.fuzz.yaml"
        stack.write_bytes(text.encode() if which == "pools" else pools)
        _check(CliRunner().invoke(main, ["preview", "--stack-file", str(stack), "-o", "json"]))

    run()


@pytest.mark.parametrize(
    "payload",
    [ALIAS_BOMB, DEEP, "volumeSize: 1e400\n", "price: " + "1" * 401 + "\n", "{" * 5000],
    ids=["alias-bomb", "deep", "1e400", "401-digits", "deep-json"],
)
def test_hostile_documents_fail_fast_and_located(payload: str, tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(payload)
    for argv in (["validate", "-f", str(path)], ["health", "--cluster", str(path)]):
        result = CliRunner().invoke(main, argv)
        _check(result)
        assert result.exit_code == 1 and str(path) in result.stderr
