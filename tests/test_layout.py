"""The code's layout, as CONTRIBUTING states it: layers that import only downward, no import of another package's
private name, Python in workflow/ only under scripts/, and scripts that read -> call -> write in at most 45 lines.
Each rule is also run on a made-up wrong input, so that a checker that passes everything fails here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "irrepro"

#: package -> the irrepro packages it must not import (at module level or inside a function)
FORBIDDEN = {
    "core": ("labels", "retrieval", "papers", "selfpref", "audit", "stats", "repro", "datasets", "plan", "cli"),
    "models": ("labels", "retrieval", "papers", "selfpref", "audit", "stats", "repro", "datasets", "plan", "cli"),
    "labels": ("papers", "retrieval", "selfpref", "audit", "repro", "plan", "cli"),
    "retrieval": ("labels", "papers", "selfpref", "audit", "plan", "cli"),
    "papers": ("selfpref", "audit", "plan", "cli"),
    "stats": ("papers", "selfpref", "audit", "labels", "plan", "cli"),
    "selfpref": ("plan", "cli"),
    "audit": ("plan", "cli"),
}
MAX_SCRIPT_LINES = 45


def package_of(module: str) -> str:
    """``irrepro.labels.plan`` -> ``labels``; a top-level module (``irrepro.plan``) is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def imports_of(source: str, module: str) -> list[tuple[str, str | None]]:
    """``(imported module, name or None)`` for every import in ``source`` (relative imports resolved against
    ``module``), anywhere in the file."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(module.split(".")[: -node.level] + ([base] if base else []))
            out += [(base, a.name) for a in node.names]
    return out


def layer_violations(module: str, source: str) -> list[str]:
    """Imports of ``module`` that run upward (:data:`FORBIDDEN`) or take another package's private name."""
    mine = package_of(module)
    bad = []
    for target, name in imports_of(source, module):
        if not target.startswith("irrepro"):
            continue
        theirs = package_of(target) if target != "irrepro" else (name or "")
        if theirs in FORBIDDEN.get(mine, ()):
            bad.append(f"{module} imports {target}{'.' + name if name else ''} (a higher layer)")
        if name and name.startswith("_") and not name.startswith("__") and theirs != mine:
            bad.append(f"{module} imports the private name {target}.{name}")
    return bad


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def test_no_module_imports_a_higher_layer_or_another_packages_private_name():
    bad = [v for module, path in _modules() for v in layer_violations(module, path.read_text())]
    assert not bad, "\n".join(bad)


def test_the_layer_check_fails_on_an_upward_or_private_import():
    assert layer_violations("irrepro.labels.plan", "from irrepro.papers.ci.plan import parse_measure")
    assert layer_violations("irrepro.labels.x", "def f():\n    from irrepro.retrieval import neural\n")
    assert layer_violations("irrepro.audit.x", "from irrepro.labels.base import _private")
    assert layer_violations("irrepro.labels.x", "from ..papers import ci")
    assert layer_violations("irrepro.retrieval.neural.encoders",
                            "from irrepro.labels.backends.biencoder import BiEncoderLabeler")
    assert layer_violations("irrepro.models.x", "import irrepro.labels.base")
    assert not layer_violations("irrepro.labels.x", "from irrepro.labels.base import _private")
    assert not layer_violations("irrepro.selfpref.x", "from irrepro.papers.ci import systems")


def script_problems(root: Path) -> list[str]:
    """Python files of ``root`` (a workflow folder) outside ``scripts/``, and scripts over the line limit."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] != "scripts":
            bad.append(f"workflow/{rel}: Python outside workflow/scripts/")
        elif len(path.read_text().splitlines()) > MAX_SCRIPT_LINES:
            bad.append(f"workflow/{rel}: {len(path.read_text().splitlines())} lines (at most {MAX_SCRIPT_LINES})")
    return bad


def test_workflow_python_is_scripts_of_at_most_45_lines():
    assert not script_problems(REPO / "workflow"), "\n".join(script_problems(REPO / "workflow"))


def test_the_script_check_fails_on_a_long_script_or_a_module_beside_the_rules(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "ok.py").write_text("x = 1\n" * MAX_SCRIPT_LINES)
    assert not script_problems(tmp_path)
    (tmp_path / "scripts" / "long.py").write_text("x = 1\n" * (MAX_SCRIPT_LINES + 1))
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "helper.py").write_text("x = 1\n")
    assert len(script_problems(tmp_path)) == 2


@pytest.mark.parametrize("stage", ["selfpref", "audit"])
def test_the_label_stage_analyses_are_stages_of_their_own(stage):
    """Each with its package, its plan module and its rules file."""
    assert (SRC / stage / "plan.py").is_file() and (REPO / "workflow" / "rules" / f"{stage}.smk").is_file()
