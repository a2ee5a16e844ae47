"""One JSON/YAML writer: documents reach users through ``nodewright.reader.dump_json``/``dump_yaml``.

Every call of ``json.dump(s)``, ``yaml.dump``/``safe_dump`` or ``orjson.dumps`` elsewhere in the
product is listed here with why it is not a document output (keys, hashes, formats other programs
define byte for byte); a new one fails until it goes through the reader or is justified here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WRITERS = {("json", "dump"), ("json", "dumps"), ("yaml", "dump"), ("yaml", "safe_dump"), ("orjson", "dumps")}
WRITERS |= {("_orjson", "dumps")}

ALLOWED: dict[str, str] = {
    "nodewright/reader.py": "the writer",
    "nodewright/decoding.py": "the duplicate-key proof re-encodes decoded data to count colons, not output",
    "nodewright/catalog/cache.py": "the catalog cache's own compact file format and its keys",
    "nodewright/crd/admission.py": "memo and list-map keys",
    "nodewright/crd/ratchet.py": "list-map keys",
    "nodewright/crd/values.py": "JSON normalisation of values (round trip), not output",
    "nodewright/userdata/launch_template.py": "the launch template's identity hash text",
    "nodewright/osc/nodeplan.py": "TOML string quoting in containerd's hosts.toml",
    "nodewright/osc/render_ignition.py": "the Ignition config, as Gardener renders it",
    "nodewright/osc/render_cloudinit.py": "the cloud-config, as Gardener renders it",
    "nodewright/stack/build.py": "a deep copy through JSON",
    "nodewright/preview/__init__.py": "a Pulumi stack config value (a JSON string)",
    "nodewright/preview/diff.py": "a value's text in the diff and for the secret detector",
    "nodewright/preview/runner.py": "mock values and a sort key",
}


def _writers(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) in WRITERS
    ]


def test_only_the_reader_writes_json_or_yaml_documents() -> None:
    found: dict[str, list[int]] = {}
    for package in ("nodewright", "nodewright_pulumi"):
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = _writers(path)
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    unexpected = {f: lines for f, lines in found.items() if f not in ALLOWED}
    assert unexpected == {}, "write JSON/YAML documents with nodewright.reader.dump_json/dump_yaml"
    assert set(ALLOWED) - set(found) == set(), "drop the stale ALLOWED entries"
