"""`nodewright init DIR`: the scaffolded repository works as this one does.

Real processes in a temporary directory: init, then in DIR `validate`, `preview` in every format
(the packaged program, found through DIR's Pulumi.yaml and two-line __main__.py) and the policy pack
of DIR/policies as pulumi_policy builds it; the scaffolded workflow and this repository's action
lint clean (actionlint + zizmor); the templates stay copies of this repository's examples.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
import yaml
from adopt_helpers import ROOT, SHA, run

TEMPLATES = ROOT / "nodewright" / "data" / "scaffold"
LAYOUT = {
    "Pulumi.yaml",
    "__main__.py",
    "requirements.txt",
    ".gitignore",
    ".pre-commit-config.yaml",
    ".github/workflows/nodewright.yaml",
    "stacks/Pulumi.dev.yaml",
    "stacks/nodepools.yaml",
    "stacks/nodeclasses.yaml",
    "stacks/cluster-info.yaml",
    "policies/PulumiPolicy.yaml",
    "policies/__main__.py",
    "policies/config.json",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("user")
    done = run(["init", "my-fleet", "--action", f"nodewright/nodewright@{SHA}", "-o", "json"], base)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["project"] == "my-fleet"
    return base / "my-fleet"


def test_init_writes_the_layout(repo: Path) -> None:
    files = {str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()}
    assert files == LAYOUT
    assert yaml.safe_load((repo / "Pulumi.yaml").read_text())["name"] == "my-fleet"
    assert "nodewright[live]==" in (repo / "requirements.txt").read_text()
    hooks = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())["repos"][0]
    assert hooks["repo"] == "https://github.com/nodewright/nodewright" and hooks["rev"] == SHA
    assert hooks["hooks"][0]["id"] == "nodewright-validate"


def test_init_refuses_a_non_empty_directory_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "mine.txt").write_text("keep me\n")
    done = run(["init", "d"], tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("error: d: directory is not empty") and "--force" in lines[0]
    )
    assert "Traceback" not in done.stderr
    forced = run(["init", "d", "--force"], tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "d" / "mine.txt").read_text() == "keep me\n"
    assert (tmp_path / "d" / "Pulumi.yaml").is_file()
    # by tag (the default): a warning says to pin by commit SHA
    assert "pin it by commit SHA" in forced.stderr


def test_init_rejects_a_malformed_action(tmp_path: Path) -> None:
    done = run(["init", "x", "--action", "not-an-action"], tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("error: <args>: --action 'not-an-action'")


def test_templates_are_copies_of_this_repository() -> None:
    """The scaffold's examples, pack and program shim are this repository's (which is the same
    layout): one change, both places, or this fails."""
    for rel in (
        "stacks/nodepools.yaml",
        "stacks/nodeclasses.yaml",
        "stacks/cluster-info.yaml",
        "policies/PulumiPolicy.yaml",
        "policies/config.json",
        "policies/__main__.py",
        "__main__.py",
    ):
        assert (TEMPLATES / rel).read_text() == (ROOT / rel).read_text(), rel
    ours = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    theirs = yaml.safe_load((TEMPLATES / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    assert theirs["nodewright:cluster"] == ours["nodewright:cluster"]
    assert theirs["nodewright:karpenterVersion"] == ours["nodewright:karpenterVersion"]
    # the docs' advice for karpenter mode (Karpenter deletes templates it did not make)
    assert theirs["nodewright:mode"] == "karpenter" and theirs["nodewright:launchTemplates"] is False


def test_validate_in_the_scaffolded_repository(repo: Path) -> None:
    done = run(
        ["validate", "-f", "stacks/nodepools.yaml", "-f", "stacks/nodeclasses.yaml", "-o", "json"], repo
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["objects"] == {"EC2NodeClass": 2, "NodePool": 2}


@pytest.mark.slow
def test_preview_in_the_scaffolded_repository_every_format(repo: Path) -> None:
    doc = run(["preview", "-o", "json"], repo)
    assert doc.returncode == 0, doc.stderr
    data = json.loads(doc.stdout)
    assert data["project"] == "my-fleet" and data["stack"] == "dev"
    types = {r["type"] for r in data["resources"]}
    assert {"kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"} <= types
    assert data["summary"]["mandatoryViolations"] == 0
    md = run(["preview", "-o", "markdown", "--policy-pack-config", "policies/config.json"], repo)
    assert md.returncode == 0 and md.stdout.lstrip().startswith("#"), md.stderr
    table = run(["preview", "-o", "table"], (repo / "stacks"))  # Pulumi.yaml found upwards
    assert table.returncode == 0 and "Previewing my-fleet/dev" in table.stdout, table.stderr
    elsewhere = run(["preview", "--project-dir", str(repo), "-o", "json"], repo.parent)
    assert elsewhere.returncode == 0 and json.loads(elsewhere.stdout)["project"] == "my-fleet"


def test_preview_outside_a_project_says_what_to_do(tmp_path: Path) -> None:
    done = run(["preview"], tmp_path)
    assert done.returncode == 1
    assert (
        done.stderr.count("\n") == 1
        and "nodewright init DIR" in done.stderr
        and "--project-dir" in done.stderr
    )


def test_scaffolded_policy_pack_builds_the_nodewright_pack(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DIR/policies/__main__.py, run as the Python policy host runs it, builds the nodewright pack
    (pulumi_policy's PolicyPack recorded instead of serving gRPC); the in-process analyzer then runs
    the same pack with DIR's config over DIR's program."""
    import pulumi_policy

    from nodewright.policy import PACK_NAME, POLICIES, load_config_file
    from nodewright.preview.analyzer import analyze
    from nodewright.preview.runner import load_stack, run_program

    built: list[dict[str, Any]] = []
    monkeypatch.setattr(pulumi_policy, "PolicyPack", lambda **kw: built.append(kw))
    runpy.run_path(str(repo / "policies" / "__main__.py"), run_name="__main__")
    assert len(built) == 1 and built[0]["name"] == PACK_NAME
    assert [p.name for p in built[0]["policies"]] == [p.name for p in POLICIES]
    program = run_program(load_stack(stack="dev", project_dir=repo))
    violations = analyze(program.registrations, config=load_config_file(repo / "policies" / "config.json"))
    assert not [v for v in violations if v.enforcement == "mandatory"]


def test_scaffolded_workflow_and_action_lint_clean(repo: Path) -> None:
    from test_workflow import lint, pinned_uses

    workflow = repo / ".github" / "workflows" / "nodewright.yaml"
    assert f"nodewright/nodewright@{SHA}" in pinned_uses(workflow.read_text())
    lint([workflow], repo)
    lint([ROOT / "action.yml"], ROOT)
