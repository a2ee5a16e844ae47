"""action.yml's scripts, run with bash as the runner would run them, on a scaffolded repo.

No runner here, so each ``run:`` of the composite action is executed with the environment its
``env:`` block would give it (the ``${{ }}`` values filled in by this test), ``GITHUB_OUTPUT`` /
``GITHUB_STEP_SUMMARY`` files, and a fake ``gh`` on PATH that records its calls: the base branch's
preview, the pull request's preview with ``--base``, the sticky comment (created, then edited in
place), and the failing step on a mandatory finding.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from adopt_helpers import ROOT, run

pytestmark = pytest.mark.slow

FAKE_GH = """#!/bin/bash
# records each call; `gh api --paginate .../comments` answers the id in $GH_EXISTING (if any)
printf '%s\\n' "$*" >> "$GH_LOG"
for a in "$@"; do case "$a" in body=@*) cp "${a#body=@}" "$GH_LOG.body";; esac; done
if [ "$2" = "--paginate" ] && [ -n "$GH_EXISTING" ]; then echo "$GH_EXISTING"; fi
"""


def _steps() -> dict[str, dict[str, Any]]:
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    return {s.get("id") or s.get("name", ""): s for s in steps if "run" in s}


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _step(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_action_previews_base_and_head_comments_and_fails_on_mandatory(tmp_path: Path) -> None:
    work = tmp_path / "workspace"
    base = work / ".nodewright-base"
    assert run(["init", str(work)], tmp_path).returncode == 0
    shutil.copytree(work, base)  # the base branch's checkout: the same repository before the PR
    pools = work / "stacks" / "nodepools.yaml"
    pools.write_text(pools.read_text().replace("team: platform", "team: platform-v2", 1))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    nodewright = bin_dir / "nodewright"
    nodewright.write_text(f'#!/bin/bash\nexec {sys.executable} -m nodewright.cli "$@"\n')
    (bin_dir / "gh").write_text(FAKE_GH)
    for f in (nodewright, bin_dir / "gh"):
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(temp),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_REPOSITORY": "acme/fleet",
        "GH_LOG": str(tmp_path / "gh.log"),
        "GH_EXISTING": "",
        "STACK": "dev",
    }
    steps = _steps()

    out = tmp_path / "base.out"
    done = _step(
        steps["base"],
        work,
        {**env, "GITHUB_OUTPUT": str(out), "BASE_WD": str(base), "NODEWRIGHT_BASE": str(nodewright)},
    )
    assert done.returncode == 0, done.stderr
    base_json = _outputs(out)["json"]
    assert json.loads(Path(base_json).read_text())["project"] == "workspace"

    out = tmp_path / "preview.out"
    preview_env = {
        **env,
        "GITHUB_OUTPUT": str(out),
        "PACK_CONFIG": "policies/config.json",
        "CLUSTER_STATE": "",
        "BASE_JSON": base_json,
        "NODEWRIGHT": str(nodewright),
    }
    done = _step(steps["preview"], work, preview_env)
    assert done.returncode == 0, done.stderr
    outputs = _outputs(out)
    assert outputs["rc"] == "0"
    markdown = Path(outputs["markdown"]).read_text()
    assert "CR update" in markdown  # the label change, against the base branch's preview
    assert markdown in (tmp_path / "summary.md").read_text()

    comment = next(s for name, s in steps.items() if "comment" in name.lower())
    comment_env = {**env, "GH_TOKEN": "t", "PR": "7", "MARKDOWN": outputs["markdown"]}
    assert _step(comment, work, comment_env).returncode == 0
    assert _step(comment, work, {**comment_env, "GH_EXISTING": "4242"}).returncode == 0
    calls = (tmp_path / "gh.log").read_text().splitlines()
    assert calls[0].startswith("api --paginate repos/acme/fleet/issues/7/comments")
    assert calls[1].startswith("api -X POST repos/acme/fleet/issues/7/comments -F body=@")
    assert calls[3].startswith("api -X PATCH repos/acme/fleet/issues/comments/4242 -F body=@")
    body = (tmp_path / "gh.log.body").read_text()
    assert body.startswith("<!-- nodewright-preview:dev -->\n") and "CR update" in body

    # a mandatory finding: IMDSv1 on the PR's EC2NodeClass (launch templates on to check it)
    stack = work / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(
        stack.read_text().replace("nodewright:launchTemplates: false", "nodewright:launchTemplates: true")
    )
    classes = work / "stacks" / "nodeclasses.yaml"
    docs = list(yaml.safe_load_all(classes.read_text()))
    docs[0]["spec"]["metadataOptions"] = {"httpTokens": "optional"}
    classes.write_text(yaml.safe_dump_all(docs))
    done = _step(steps["preview"], work, preview_env)
    assert done.returncode == 0, done.stderr
    rc = _outputs(out)["rc"]
    assert rc == "1"
    fail = _step(
        list(yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"])[-1], work, {**env, "RC": rc}
    )
    assert fail.returncode == 1 and "::error::nodewright preview exited 1" in fail.stdout
