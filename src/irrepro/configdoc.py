"""The parameter table of config/README.md, generated from the JSON schemas (workflow/schemas/*.schema.yaml) so
that the documentation cannot drift from what the workflow validates: ``irrepro config-doc``."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

SPINE = "config.schema.yaml"


def _fmt_default(d) -> str:
    if d is None:
        return "`null`"
    s = json.dumps(d, ensure_ascii=False)
    return f"`{s}`" if len(s) <= 40 else "(see schema)"


def _type(node) -> str:
    t = node.get("type")
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    if isinstance(t, list):
        return " or ".join(t)
    if t == "array" and isinstance(node.get("items"), dict) and "type" in node["items"]:
        return f"list of {_type(node['items'])}"
    return t or ""


def _rows(node, key):
    desc = " ".join(str(node.get("description", "")).split()).replace("|", "\\|")
    if key:
        yield key, _type(node), _fmt_default(node["default"]) if "default" in node else "", desc
    for name, sub in (node.get("properties") or {}).items():
        yield from _rows(sub, f"{key}.{name}" if key else name)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and (extra.get("properties") or extra.get("description")):
        yield from _rows(extra, f"{key}.<name>")


def parameter_table(schema_dir) -> str:
    """Markdown: one table per schema (the spine's first), a row per key with its type, default and meaning."""
    schema_dir = Path(schema_dir)
    files = [schema_dir / SPINE] + sorted(p for p in schema_dir.glob("*.schema.yaml") if p.name != SPINE)
    out = []
    for f in files:
        schema = yaml.safe_load(f.read_text())
        section = None if f.name == SPINE else f.name.split(".")[0]
        out.append(f"### `{section}:`" if section else "### Spine (top-level keys)")
        out.append("")
        out.append(f"Schema: `workflow/schemas/{f.name}`.")
        out.append("")
        out.append("| key | type | default | meaning |")
        out.append("| --- | --- | --- | --- |")
        props = {k: v for k, v in (schema.get("properties") or {}).items()}
        for name, sub in props.items():
            for key, typ, default, desc in _rows(sub, f"{section}.{name}" if section else name):
                out.append(f"| `{key}` | {typ} | {default} | {desc} |")
        out.append("")
    return "\n".join(out)
