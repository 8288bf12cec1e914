"""The per-rule software environments (workflow/envs/*.yaml, `snakemake --sdm conda`) list exactly what
pyproject.toml asks for, and every rule names one."""
import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
RUNTIME_ONLY = {"snakemake"}  # the workflow engine itself is not part of a rule's environment


def _name(req):
    return re.split(r"[<>=!\[ ]", req, maxsplit=1)[0].lower().replace("_", "-")


def _env_reqs(path):
    env = yaml.safe_load(path.read_text())
    out = {}
    for d in env["dependencies"]:
        for r in (d["pip"] if isinstance(d, dict) else [d]):
            out[_name(r)] = r.replace(" ", "")
    out.pop("pip", None)
    out.pop("python", None)
    return out


def _pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_env_matches_pyproject_dependencies():
    deps = {_name(r): r.replace(" ", "") for r in _pyproject()["dependencies"] if _name(r) not in RUNTIME_ONLY}
    for env in ("irrepro", "labels", "lucene"):
        reqs = _env_reqs(REPO / "workflow" / "envs" / f"{env}.yaml")
        assert {k: reqs[k] for k in deps if k in reqs} == deps, env
    llm = {_name(r): r.replace(" ", "") for r in _pyproject()["optional-dependencies"]["llm"]}
    labels = _env_reqs(REPO / "workflow" / "envs" / "labels.yaml")
    assert {k: labels.get(k) for k in llm} == llm
    assert set(_env_reqs(REPO / "workflow" / "envs" / "irrepro.yaml")) == set(deps)
    assert set(_env_reqs(REPO / "workflow" / "envs" / "lucene.yaml")) == set(deps) | {"openjdk"}  # + Java
    post = (REPO / "workflow" / "envs" / "lucene.post-deploy.sh").read_text()
    assert "--no-deps" in post and "pyserini==0.25.0" in post  # the jar the Lucene rules run


def test_every_rule_declares_an_environment():
    missing = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        for m in re.finditer(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", text, re.M):
            name, body = m.group(1), m.group(2)
            if name.endswith("_all") or "\n    input:" not in "\n" + body and "script:" not in body:
                continue
            if "script:" in body and "conda:" not in body:
                missing.append(f"{smk.name}:{name}")
    assert not missing, f"rules without a conda: environment: {missing}"
