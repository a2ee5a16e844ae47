"""The checks of ``promtool check metrics`` nodewright relies on, in pure Python.

promtool runs client_golang's ``prometheus/testutil/promlint`` over the text exposition. This
module translates the lint rules (not the code) that apply to gauges and counters, with promlint's
wording, so the metrics test never silently depends on a Go binary being installed:

* help: every family has help text ("no help text");
* counters end in ``_total``; other types do not ("non-counter metrics should not have "_total" suffix");
* non-histogram/non-summary families have no ``_count``/``_sum``/``_bucket`` suffix; ``le`` only on
  histograms, ``quantile`` only on summaries;
* snake_case metric and label names ("... should be written in 'snake_case' not 'camelCase'");
* no ``:`` in metric names (reserved for recording rules);
* no type in the name (``_gauge``, ``_counter``...), no abbreviated units (``_ms``, ``_sec``...),
  base units (seconds not milliseconds, bytes not kilobytes...).

A problem reads ``<metric> <text>`` like promtool's output lines.
"""

from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families

_CAMEL = re.compile(r"[a-z][A-Z]")
_UNIT_ABBREVIATIONS = ("s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d")
_BASE_UNITS = {
    "milliseconds": "seconds",
    "microseconds": "seconds",
    "nanoseconds": "seconds",
    "minutes": "seconds",
    "hours": "seconds",
    "days": "seconds",
    "kilobytes": "bytes",
    "megabytes": "bytes",
    "gigabytes": "bytes",
    "millimeters": "meters",
    "kilometers": "meters",
    "celsius": "celsius",
}


def lint(text: str) -> list[str]:
    problems: list[str] = []
    # The parser strips _total from counter family names; read TYPE lines for the real names.
    declared = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.M))
    helps = dict(re.findall(r"^# HELP (\S+) ?(.*)$", text, flags=re.M))
    for name, typ in declared.items():
        if not helps.get(name):
            problems.append(f"{name} no help text")
        if typ == "counter" and not name.endswith("_total"):
            problems.append(f'{name} counter metrics should have "_total" suffix')
        if typ != "counter" and name.endswith("_total"):
            problems.append(f'{name} non-counter metrics should not have "_total" suffix')
        if typ not in ("histogram", "summary"):
            for suffix in ("_count", "_sum", "_bucket"):
                if name.endswith(suffix):
                    problems.append(
                        f'{name} non-histogram and non-summary metrics should not have "{suffix}" suffix'
                    )
        if _CAMEL.search(name):
            problems.append(f"{name} metric names should be written in 'snake_case' not 'camelCase'")
        if ":" in name:
            problems.append(f"{name} metric names should not contain ':'")
        parts = name.split("_")
        for t in ("counter", "gauge", "histogram", "summary", "untyped"):
            if t in parts:
                problems.append(f"{name} metric name should not include type '{t}'")
        for unit in _UNIT_ABBREVIATIONS:
            if unit in parts[1:]:
                problems.append(f"{name} metric names should not contain abbreviated units")
        for unit, base in _BASE_UNITS.items():
            if unit in parts and unit != base:
                problems.append(f'{name} use base unit "{base}" instead of "{unit}"')
    for family in text_string_to_metric_families(text):
        label_names = {k for s in family.samples for k in s.labels}
        for label in sorted(label_names):
            if _CAMEL.search(label):
                problems.append(
                    f"{family.name} label names should be written in 'snake_case' not 'camelCase'"
                )
        if "le" in label_names and family.type != "histogram":
            problems.append(f'{family.name} non-histogram metrics should not have "le" label')
        if "quantile" in label_names and family.type != "summary":
            problems.append(f'{family.name} non-summary metrics should not have "quantile" label')
    return sorted(set(problems))
