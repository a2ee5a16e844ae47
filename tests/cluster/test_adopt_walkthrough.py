"""README "Adopt on an existing cluster", run as written: snapshot -> validate -> preview -> first PR -> merge.

The commands are read from the README's walkthrough block and run with bash in a scratch copy of
the repository, the kubeconfig pointing at the loopback API server (apiserver_harness) that serves
the example cluster state. The first PR is a NodePool label change previewed against the base;
the merge is the workflow's ``up`` job, checked for the cluster credentials it needs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from apiserver_harness import ROOT, kubeconfig_for, serve

SECTION = "### Adopt on an existing cluster"


def walkthrough_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split(SECTION, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    return [line.strip() for line in block.splitlines() if line.strip().startswith("nodewright ")]


def _scratch(tmp: Path) -> Path:
    dest = tmp / "repo"
    dest.mkdir()
    for name in ("stacks", "policies"):
        shutil.copytree(ROOT / name, dest / name)
    for name in ("Pulumi.yaml", "__main__.py", "requirements.txt"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


def _run(command: str, cwd: Path, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "KUBECONFIG": str(kubeconfig),
    }
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_walkthrough_has_every_step() -> None:
    commands = walkthrough_commands()
    verbs = [c.split()[1] for c in commands]
    assert verbs[0] == "cluster" and "validate" in verbs and "drift" in verbs and verbs[-1] == "preview"


def test_adopt_on_an_existing_cluster_end_to_end(tmp_path: Path) -> None:
    repo = _scratch(tmp_path)
    with serve() as url:
        kubeconfig = kubeconfig_for(url, tmp_path)
        for command in walkthrough_commands():
            result = _run(command, repo, kubeconfig)
            assert result.returncode == 0, f"`{command}` exited {result.returncode}:\n{result.stderr[-2000:]}"
            assert "Traceback" not in result.stderr
        state = json.loads((repo / "cluster-state.json").read_text())
        assert {i["kind"] for i in state["items"]} >= {"Pod", "Node", "NodeClaim", "NodePool", "EC2NodeClass"}
        comment = (repo / "comment.md").read_text()
        assert (
            "#### NodePools" in comment
            and "Drift impact (cluster state: `cluster-state.json`, at " in comment
        )
        assert "No resource changes." in comment  # base == head before any change

        # First PR: a label change on the default NodePool, previewed against the base.
        pools = repo / "stacks" / "nodepools.yaml"
        text = pools.read_text()
        assert "team: platform" in text
        pools.write_text(text.replace("team: platform", "team: platform-v2", 1))
        pr = walkthrough_commands()[-1].replace("comment.md", "pr.md")
        result = _run(pr, repo, kubeconfig)
        assert result.returncode == 0, result.stderr[-2000:]
        md = (repo / "pr.md").read_text()
        row = next(line for line in md.splitlines() if line.startswith("| `default` |"))
        # The applied dev stack keeps nodewright's launch templates off (karpenter mode): a CR update.
        assert "CR update" in row and "LT" not in row
        # the rollout is the disruption simulation's: the served PodDisruptionBudget default/web (no
        # status: 0 disruptions allowed) blocks the node its pods land on once the first node rolled
        assert re.search(r"\| `default` \|.*\| 2 of 2, 1 at a time, 1 wave\(s\) \|", md), row
        assert "does not roll: Pdb prevents pod evictions (PodDisruptionBudget=[default/web])" in md

        # The same PR on the preview-only copy with launch templates on: a label is in the rendered
        # user data, so the template's content-addressed name (karpenter.k8s.aws/<hash>, as
        # Karpenter names it) changes: a new template replaces it, and the user-data diff shows it.
        shutil.copy2(ROOT / "tests/data/pulumi/stacks/Pulumi.dev-userdata.yaml", repo / "stacks")
        pools.write_text(text)
        with_lts = "--stack-file stacks/Pulumi.dev-userdata.yaml --cluster-state cluster-state.json"
        base = _run(f"nodewright preview {with_lts} -o json > base-lt.json", repo, kubeconfig)
        assert base.returncode == 0, base.stderr[-2000:]
        pools.write_text(text.replace("team: platform", "team: platform-v2", 1))
        pr_lt = _run(
            f"nodewright preview {with_lts} --base base-lt.json -o markdown > pr-lt.md", repo, kubeconfig
        )
        assert pr_lt.returncode == 0, pr_lt.stderr[-2000:]
        md = (repo / "pr-lt.md").read_text()
        row = next(line for line in md.splitlines() if line.startswith("| `default` |"))
        assert "CR update" in row and "LT replace" in row
        assert "team=platform-v2" in md  # the user-data diff shows the new label

    # Merge: the workflow's up job gets cluster credentials and applies with the policy pack.
    workflow = yaml.safe_load((ROOT / ".github/workflows/pulumi.yaml").read_text())
    steps = workflow["jobs"]["up"]["steps"]
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    uses = [str(s.get("uses", "")) for s in steps]
    assert any(u.startswith("aws-actions/configure-aws-credentials@") for u in uses)
    assert "aws eks update-kubeconfig" in runs and "KUBECONFIG=" in runs
    up = next(s for s in steps if str(s.get("uses", "")).startswith("pulumi/actions@"))
    assert up["with"]["command"] == "up" and up["with"]["policyPacks"] == "policies"
