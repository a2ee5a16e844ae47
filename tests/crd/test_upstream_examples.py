"""Every upstream example manifest of Karpenter v1.14.1 (aws/karpenter-provider-aws
``examples/v1/*.yaml``, copied under tests/data/upstream/karpenter-v1.14.1/examples with
PROVENANCE) loads through the one loading path, validates, and hashes as Karpenter stamps it: hash
version v3 over the defaulted ``spec.template``, consistent with the hash vectors of
tests/data/drift/nodepool-hash-vectors.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nodewright import crd
from nodewright.api import load_objects
from nodewright.cli import main
from nodewright.drift.inputs import hash_documents
from nodewright.drift.nodepoolhash import template_hash
from nodewright.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = sorted((DATA / "upstream" / "karpenter-v1.14.1" / "examples").glob("*.yaml"))
VECTORS = yaml.safe_load((DATA / "drift" / "nodepool-hash-vectors.yaml").read_text())
# Upstream's own example the v1.14.1 API server rejects: nodeClassRef.group carries a version
# ("karpenter.k8s.aws/v1"), against the CRD pattern ^[^/]*$.
REJECTED = {"windows-custom-userdata.yaml": "documents[0].spec.template.spec.nodeClassRef.group"}


def test_all_22_examples_are_present() -> None:
    assert len(EXAMPLES) == 22


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_loads_validates_and_hashes(path: Path) -> None:
    if path.name in REJECTED:
        with pytest.raises(InputError) as info:
            load_objects([path])
        assert info.value.path == REJECTED[path.name]
        assert "CRD pattern ^[^/]*$" in info.value.message
        return
    objs = load_objects([path])
    assert objs.nodepools or objs.nodeclasses
    # NodePool rows only (`hash` also prints the EC2NodeClasses of the file, often named alike)
    hashes = (
        {
            h.name: h
            for h in hash_documents([path], release=crd.default_release())
            if "kind" not in h.as_dict()
        }
        if objs.nodepools
        else {}
    )
    for np in objs.nodepools:
        stored = np.stored_body
        written = np.written_body
        assert stored is not None and written is not None
        # what Karpenter hashes: the defaulted template (expireAfter 720h when absent)
        assert stored["spec"]["template"]["spec"]["expireAfter"] == (
            written["spec"]["template"]["spec"].get("expireAfter") or "720h"
        )
        h = hashes[np.name]
        assert h.version == crd.default_release().nodepool_hash_version == "v3"
        assert h.hash == template_hash(stored["spec"]["template"])
        assert h.hash == template_hash(written["spec"]["template"], crd_defaults=True)


def _key(template: Any) -> str:
    tmpl = json.loads(json.dumps(template))
    tmpl.get("spec", {}).pop("requirements", None)  # not hashed
    return json.dumps(tmpl, sort_keys=True)


def test_example_hashes_agree_with_the_hash_vectors() -> None:
    """The vectors hash their templates exactly as given; where an example's defaulted template
    equals a vector's (requirements aside), the printed hash is the vector's: nodewright hash
    prints what the upstream Go library computes over the defaulted template."""
    by_template = {_key(v["template"]): v["hash"] for v in VECTORS}
    matched = 0
    for path in EXAMPLES:
        if path.name in REJECTED:
            continue
        hashes = (
            {h.name: h.hash for h in hash_documents([path], release=crd.default_release())}
            if "NodePool" in path.read_text()
            else {}
        )
        for np in load_objects([path]).nodepools:
            key = _key(np.stored_body["spec"]["template"])  # type: ignore[index]
            if key in by_template:
                matched += 1
                assert hashes[np.name] == by_template[key], (path.name, np.name)
    assert matched >= 1


def test_hash_cli_prints_the_defaulted_hash_and_as_written_on_request() -> None:
    path = str(DATA / "upstream" / "karpenter-v1.14.1" / "examples" / "general-purpose.yaml")
    default = CliRunner().invoke(main, ["hash", "-f", path, "-o", "json"])
    compat = CliRunner().invoke(main, ["hash", "-f", path, "--crd-defaults", "-o", "json"])
    written = CliRunner().invoke(main, ["hash", "-f", path, "--as-written", "-o", "json"])
    assert default.exit_code == compat.exit_code == written.exit_code == 0
    vectors = {v["name"]: v["hash"] for v in VECTORS}
    assert json.loads(default.stdout)[0]["hash"] == vectors["default-720h"]
    assert json.loads(compat.stdout) == json.loads(default.stdout)
    assert json.loads(written.stdout)[0]["hash"] == vectors["nodeclassref-only"]
    both = CliRunner().invoke(main, ["hash", "-f", path, "--crd-defaults", "--as-written"])
    assert both.exit_code == 2
