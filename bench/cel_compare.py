"""Compare CEL libraries from PyPI on Karpenter v1.14.1's own rules: correctness, then speed.

``python bench/cel_compare.py``: each case is a rule copied from the shipped CRDs (or a Kubernetes
CEL library function they use: ``find``, ``split``) with a value and the API server's verdict
(True, False, or "error": the rule cannot be evaluated and the object is rejected). Kubernetes
extension functions a library lacks (``find`` everywhere, ``split`` where the library has no
strings extension) are registered as that library's custom functions, as nodewright does. A
library that is not installed is skipped. Results go into docs/validation.md.

Candidates: ``cel-expr-python`` (Google's CEL C++ runtime, used by nodewright), ``common-expression-
language`` (module ``cel``, Rust cel-interpreter), ``cel-python`` (module ``celpy``, pure Python).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from typing import Any

AWS_LABELS = "['karpenter.k8s.aws/instance-tenancy', 'karpenter.k8s.aws/placement-group-id']"
REQ_INT = "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)"
CASES: list[tuple[str, Any, Any]] = [
    (
        "self.all(x, x in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !x.find('^([^/]+)').endsWith('karpenter.sh'))",
        {"foo.karpenter.sh/x": "a"},
        False,
    ),
    (
        "self.all(x, x in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !x.find('^([^/]+)').endsWith('karpenter.sh'))",
        {"example.com/x": "a", "nokey": "b"},
        True,
    ),
    (
        f"self in {AWS_LABELS} || !self.find('^([^/]+)').endsWith('karpenter.k8s.aws')",
        "karpenter.k8s.aws/foo",
        False,
    ),
    (
        "self in ['karpenter.sh/capacity-type'] || !self.find('^([^/]+)').endsWith('karpenter.sh')",
        "nodomain",
        True,
    ),
    ("self.split('@')[0] in ['al2','al2023','bottlerocket']", "al2023@latest", True),
    (
        "self.split('@')[0] in ['windows2019','windows2022','windows2025'] ? self.split('@')[1] == 'latest' : true",
        "windows2022@v1",
        False,
    ),
    (REQ_INT, [{"operator": "Gt", "values": ["9223372036854775808"]}], "error"),
    (REQ_INT, [{"operator": "Gt", "values": ["abc"]}], "error"),
    (REQ_INT, [{"operator": "Lt", "values": ["-1"]}], False),
    (REQ_INT, [{"operator": "Lt", "values": ["9223372036854775807"]}], True),
    (
        "self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1",
        [{"rootVolume": True}, {"rootVolume": True}],
        False,
    ),
    ("self.matches('^[a-zA-Z0-9]+@.+$')", "al2@v1", True),
    (
        "!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))",
        {"replicas": 1, "limits": {"nodes": 3}},
        True,
    ),
    (
        "!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))",
        {"replicas": 1, "limits": {"cpu": 3}},
        False,
    ),
    (
        "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)",
        [{"operator": "In", "values": ["a"], "minValues": 2}],
        False,
    ),
    ("self.all(x, has(x.schedule) == has(x.duration))", [{"nodes": "1", "schedule": "@daily"}], False),
    ("self.all(k, k != '' && self[k] != '')", {"a": ""}, False),
    ("self.all(x, !self[x].startsWith('-'))", {"cpu": "-1"}, False),
    (
        "has(self.evictionSoft) ? self.evictionSoft.all(e, (e in self.evictionSoftGracePeriod)):true",
        {"evictionSoft": {"memory.available": "1%"}},
        "error",
    ),
    (
        "has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ?  self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent  : true",
        {"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 50},
        False,
    ),
    (
        "!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2023') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2023') : true)",
        {"amiFamily": "AL2", "amiSelectorTerms": [{"alias": "al2023@latest"}]},
        False,
    ),
    (
        "!(self.exists(x, has(x.alias)) && self.size() != 1)",
        [{"alias": "al2@latest"}, {"id": "ami-1"}],
        False,
    ),
    (
        "self.size() == 0 || self.exists(x, x.deviceIndex == 0 && x.networkCardIndex == 0 && x.interfaceType == 'interface')",
        [{"deviceIndex": 0, "networkCardIndex": 0, "interfaceType": "interface"}],
        True,
    ),
    (
        "self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex == y.deviceIndex).size() == 1)",
        [{"deviceIndex": 0, "networkCardIndex": 0}, {"deviceIndex": 0, "networkCardIndex": 0}],
        False,
    ),
    (
        "(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))",
        {"role": "r", "instanceProfile": "p"},
        False,
    ),
]


def _find(s: str, pattern: str) -> str:
    m = re.search(pattern, s, re.ASCII)
    return m.group(0) if m else ""


def cel_expr_python() -> Callable[[int], Any]:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_strings

    decl = cel.FunctionDecl(
        "find",
        [
            cel.Overload(
                "string_find_string", cel.Type.STRING, [cel.Type.STRING] * 2, is_member=True, impl=_find
            )
        ],
    )
    env = cel.NewEnv(
        variables={"self": cel.Type.DYN}, extensions=[ext_strings.ExtStrings()], functions=[decl]
    )
    progs = [env.compile(r) for r, _, _ in CASES]

    def ev(i: int) -> Any:
        v = progs[i].eval(data={"self": CASES[i][1]})
        if v.type() == cel.Type.ERROR:
            raise RuntimeError(v.value())
        return v.value()

    return ev


def common_expression_language() -> Callable[[int], Any]:
    import cel  # type: ignore[import-not-found]

    progs = [cel.compile(r) for r, _, _ in CASES]

    def ev(i: int) -> Any:
        ctx = cel.Context()
        ctx.add_function("find", _find)
        ctx.add_function("split", lambda s, sep: s.split(sep))
        ctx.add_variable("self", CASES[i][1])
        return progs[i].execute(ctx)

    return ev


def cel_python() -> Callable[[int], Any]:
    import celpy  # type: ignore[import-not-found]
    from celpy import celtypes  # type: ignore[import-not-found]

    def find(s: Any, pattern: Any) -> Any:
        return celtypes.StringType(_find(str(s), str(pattern)))

    def split(s: Any, sep: Any) -> Any:
        return celtypes.ListType([celtypes.StringType(p) for p in str(s).split(str(sep))])

    env = celpy.Environment()
    progs = [env.program(env.compile(r), functions={"find": find, "split": split}) for r, _, _ in CASES]

    def ev(i: int) -> Any:
        r = progs[i].evaluate({"self": celpy.json_to_cel(CASES[i][1])})
        if isinstance(r, Exception):
            raise r
        return bool(r)

    return ev


def main() -> None:
    for name, factory in (
        ("cel-expr-python", cel_expr_python),
        ("common-expression-language", common_expression_language),
        ("cel-python", cel_python),
    ):
        try:
            ev = factory()
        except ImportError:
            print(f"{name}: not installed, skipped")
            continue
        right = 0
        for i, (_, _, want) in enumerate(CASES):
            try:
                got: Any = ev(i)
            except Exception:
                got = "error"
            right += got == want if want == "error" else (got is want)
        n = 200
        t0 = time.process_time()
        for _ in range(n):
            for i in range(len(CASES)):
                with contextlib.suppress(Exception):
                    ev(i)
        us = (time.process_time() - t0) / (n * len(CASES)) * 1e6
        print(f"{name}: {right}/{len(CASES)} correct, {us:.1f} us per evaluation")


if __name__ == "__main__":
    main()
