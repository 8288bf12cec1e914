"""Every module of the library imports (a moved module or a stale relative import fails here, not in a DAG job),
and the workflow scripts hold no `sys.path` edits."""
import importlib
import pkgutil
from pathlib import Path

import pytest

import irrepro

MODULES = sorted(m.name for m in pkgutil.walk_packages(irrepro.__path__, "irrepro."))


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    importlib.import_module(name)


def test_function_level_imports_resolve():
    """Imports inside functions (kept lazy for start-up time) name modules that exist."""
    import ast

    root = Path(irrepro.__file__).parent
    bad = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("irrepro"):
                if importlib.util.find_spec(node.module) is None:
                    bad.append(f"{path.relative_to(root)}:{node.lineno} {node.module}")
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                bad.append(f"{path.relative_to(root)}:{node.lineno} relative import (use irrepro.<package>)")
    assert not bad, bad


def test_workflow_scripts_import_what_exists():
    """`from irrepro.x import name` in every workflow script names a module and an attribute that exist."""
    import ast

    repo = Path(__file__).resolve().parents[1]
    bad = []
    for path in sorted((repo / "workflow" / "scripts").rglob("*.py")):
        text = path.read_text()
        assert "sys.path" not in text, f"{path}: no sys.path edits"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("irrepro"):
                try:
                    mod = importlib.import_module(node.module)
                except ImportError as e:
                    bad.append(f"{path.name}:{node.lineno} {node.module}: {e}")
                    continue
                for alias in node.names:
                    if not hasattr(mod, alias.name) and importlib.util.find_spec(
                            f"{node.module}.{alias.name}") is None:
                        bad.append(f"{path.name}:{node.lineno} {node.module}.{alias.name}")
    assert not bad, bad
