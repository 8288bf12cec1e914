"""Where each result comes from: for every rule that writes a table or figure, its outputs, its script and the
library modules the script calls, read from workflow/rules/*.smk and the scripts themselves, so the docs cannot
drift from the workflow. ``python -m irrepro.targetdoc`` rewrites the generated block of each page in :data:`PAGES`
(between ``<!-- targets:begin -->`` and ``<!-- targets:end -->``); tests/test_docs_targets.py checks them."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: doc page -> the rule files whose tables and figures it documents
PAGES = {
    "docs/bv.md": ["bv.smk", "querymodels.smk"],
    "docs/sampling.md": ["sampling.smk"],
    "docs/ci.md": ["ci.smk"],
    "docs/vb.md": ["vb.smk"],
    "docs/stats.md": ["stats.smk"],
    "docs/repro.md": ["repro.smk"],
    "docs/labels.md": ["labels.smk", "selfpref.smk", "audit.smk"],
    "docs/report.md": ["fetch.smk", "evaluate.smk", "imports.smk", "verify.smk", "cost.smk", "provenance.smk"],
}
BEGIN, END = "<!-- targets:begin -->", "<!-- targets:end -->"
RESULT = (".csv", ".md", ".png", ".pdf", ".tsv", ".json")


@dataclass
class Rule:
    name: str
    outputs: list
    script: str | None     # path from the repository root
    modules: list          # irrepro modules the script imports


def _section(block: str, key: str) -> str:
    m = re.search(rf"^    {key}:\n(.*?)(?=^    [a-z_]+:|\Z)", block, re.S | re.M)
    return m.group(1) if m else ""


def _is_module(name: str) -> bool:
    p = ROOT / "src" / Path(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def script_modules(path: Path) -> list[str]:
    """The ``irrepro`` modules a script imports (``from irrepro.papers.ci import plots`` names
    ``irrepro.papers.ci.plots``), less ``irrepro.core.logs`` (every script's log harness)."""
    out = []
    pattern = r"^[ \t]*from (irrepro[\w.]*) import (?:\(([^)]*)\)|([\w, \t]+))|^[ \t]*import (irrepro[\w.]*)"
    for m in re.finditer(pattern, path.read_text(), re.M):
        if m.group(4):
            out.append(m.group(4))
            continue
        base = m.group(1)
        names = [n.strip().split(" as ")[0] for n in (m.group(2) or m.group(3)).split(",") if n.strip()]
        subs = [f"{base}.{n}" for n in names if _is_module(f"{base}.{n}")]
        out += subs or [base]
    return sorted(set(out) - {"irrepro.core.logs"})


def rules(smk: str) -> list[Rule]:
    """The rules of one rule file that write a table, figure or values file, in file order."""
    text = (ROOT / "workflow" / "rules" / smk).read_text()
    out = []
    # a rule at the top level (``rule name:``), in an if block, or made in a loop (``rule:`` with a ``name:``,
    # one per collection: documented under the folder of its benchmark files, as in the cost table); its block
    # dedented to the top level's indentation
    for m in re.finditer(r"^( *)rule( \w+)?:\n(.*?)(?=^ *rule[ :]|\Z)", text, re.S | re.M):
        indent, block = len(m.group(1)), m.group(3)
        block = "\n".join(line[indent:] for line in block.splitlines())
        if m.group(2):
            name = m.group(2).strip()
        else:
            named = re.search(r"/benchmarks/(\w+)", block)  # its family: the folder of its benchmark files
            if not named:
                continue
            name = named.group(1)
        outputs = []
        for s in re.findall(r'f?"([^"]+)"', _section(block, "output")):
            if s.startswith("../") or "/" not in s:
                continue
            s = s.replace("{V}/", "").replace("{{", "{").replace("}}", "}")
            if s.endswith(RESULT) and "/logs/" not in s and not s.startswith("logs/"):
                outputs.append(s)
        script = re.search(r'^    script:\n\s+"\.\./(scripts/[^"]+)"', block, re.M)
        if not outputs:
            continue
        path = f"workflow/{script.group(1)}" if script else None
        mods = script_modules(ROOT / path) if path and (ROOT / path).exists() else []
        out.append(Rule(name, list(dict.fromkeys(outputs)), path, mods))
    return out


def block(page: str) -> str:
    """The generated Markdown table of one page."""
    lines = ["| rule | outputs (under `results/<version>/`) | script | library modules |", "| --- | --- | --- | --- |"]
    for smk in PAGES[page]:
        for r in rules(smk):
            outs = ", ".join(f"`{o}`" for o in r.outputs)
            mods = ", ".join(f"`{m}`" for m in r.modules) or "—"
            lines.append(f"| `{r.name}` | {outs} | `{r.script}` | {mods} |" if r.script else
                         f"| `{r.name}` | {outs} | — (a shell command) | {mods} |")
    return "\n".join(lines)


def update(page: str) -> bool:
    """Rewrite the generated block of ``page``; True when it changed."""
    p = ROOT / page
    text = p.read_text()
    pre, rest = text.split(BEGIN)
    _, post = rest.split(END)
    new = f"{pre}{BEGIN}\n{block(page)}\n{END}{post}"
    if new != text:
        p.write_text(new)
    return new != text


if __name__ == "__main__":
    for page in PAGES:
        print(page, "updated" if update(page) else "unchanged")
