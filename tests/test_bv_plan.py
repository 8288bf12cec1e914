"""The bias–variance papers' plan (irrepro.papers.bv.plan), verify hook (irrepro.papers.bv.verify) and reference
rows (workflow/resources/reference/bv.yaml)."""
import copy
import subprocess
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from conftest import MACHINE_PATH
from irrepro.core.verify import build_verify_table, load_reference
from irrepro.errors import InputError
from irrepro.papers.bv import plan, verify
from irrepro.plan import Plan

REPO = Path(__file__).resolve().parents[1]
SESSION = Path(__file__).parent / "data" / "session"
SPINE = Plan(version="t", V="results/t", res="resources", mirror=None, collections=["vaswani"],
             imports=["trec-web2012", "trec8-adhoc"], all_scored=["vaswani", "trec-web2012", "trec8-adhoc"],
             systems={"vaswani": ["bm25"]},
             measures={"vaswani": ["AP", "nDCG@10"], "trec-web2012": ["ERR@20"], "trec8-adhoc": ["AP"]})


def _config(**bv):
    """A config as common.smk hands it over: the `bv` section validated against its schema, defaults filled."""
    section = {"seed": 7, "table9": {"collections": {"trec8-adhoc": "AP", "trec-web2012": "ERR@20"}},
               "table8": {"collection": "trec-web2012"}, "fig1": {"collections": {"trec8-adhoc": "AP", "vaswani": "AP"}},
               "simulation": {"collections": ["vaswani"]}}
    section.update(bv)
    validate(section, str(REPO / "workflow" / "schemas" / "bv.schema.yaml"), set_default=True)
    return {"bv": section, "querymodels": {"collections": ["vaswani"]},
            "imports": {"trec8-adhoc": {"type": "matrix"}, "trec-web2012": {"type": "matrix"}}}


def test_resolve_good_config():
    p = plan.resolve(_config(), SPINE)
    assert p.table9 == {"trec8-adhoc": "AP", "trec-web2012": "ERR@20"}
    assert p.fig1 == {"trec8-adhoc": "AP", "vaswani": "AP"}
    assert p.table8 == "trec-web2012" and p.simulation == ("vaswani",) and p.simulation_imports == {}
    assert p.sigir13 == ("vaswani",) and p.table12_tracks == () and p.table12_inputs == ()
    # the verify table's values files, in the order the old bv_verify rule read them
    assert p.values == ("table2", "table9", "table8", "sigir13_vaswani", "sigir13_tables", "table10", "table11")
    with pytest.raises(Exception):
        p.table8 = None  # frozen
    # nothing configured: only the toy tables
    q = plan.resolve(_config(table9={}, table8={}, fig1={}, simulation={}), SPINE)
    assert q.table9 == {} and q.table8 is None and q.simulation == ()
    assert q.values == ("table2", "sigir13_vaswani", "sigir13_tables")


def test_resolve_session_tracks_and_run_imports(tmp_path):
    tracks = {"session2011": {"qrels": str(SESSION / "qrels.txt"), "runs": str(SESSION / "runs"),
                              "topic_map": str(SESSION / "sessiontopicmap.txt"), "conditions": ["RL1", "RL2", "RL3"]}}
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.run").write_text("")
    (runs / ".hidden").write_text("")
    cfg = _config(table12={"tracks": tracks}, simulation={"collections": ["vaswani", "mine"]})
    cfg["imports"]["mine"] = {"type": "runs", "runs": str(runs), "qrels": str(tmp_path / "qrels.txt")}
    p = plan.resolve(cfg, SPINE)
    assert p.table12_tracks == ("session2011",)
    assert p.table12_inputs[:2] == (str(SESSION / "qrels.txt"), str(SESSION / "sessiontopicmap.txt"))
    assert len(p.table12_inputs) == 2 + 9 and all("/runs/" in f for f in p.table12_inputs[2:])
    assert p.simulation_imports == {"mine": {"runs": [str(runs / "a.run")], "qrels": str(tmp_path / "qrels.txt")}}
    assert p.values[-1] == "table12"


@pytest.mark.parametrize("bv, key", [
    ({"table9": {"collections": {"nowhere": "AP"}}}, "config key bv.table9.collections: collection 'nowhere'"),
    ({"table9": {"collections": {"trec-web2012": "AP"}}},
     "config key bv.table9.collections: 'trec-web2012' has no 'AP' scores"),
    ({"fig1": {"collections": {"nowhere": "AP"}}}, "config key bv.fig1.collections: collection 'nowhere'"),
    ({"table8": {"collection": "nowhere"}}, "config key bv.table8.collection: collection 'nowhere'"),
    ({"table8": {"collection": "trec8-adhoc"}}, "config key bv.table8.collection: 'trec8-adhoc' has no 'ERR@20'"),
    ({"simulation": {"collections": ["trec8-adhoc"]}}, "config key bv.simulation.collections: 'trec8-adhoc'"),
    ({"table12": {"tracks": {"s": {"qrels": "/no/qrels", "runs": str(SESSION / "runs"), "conditions": ["RL1"]}}}},
     "config key bv.table12.tracks.s.qrels: '/no/qrels' does not exist"),
    ({"table12": {"tracks": {"s": {"qrels": str(SESSION / "qrels.txt"), "runs": "/no/runs", "conditions": ["RL1"]}}}},
     "config key bv.table12.tracks.s.runs: '/no/runs' does not exist"),
])
def test_resolve_errors_name_the_key(bv, key):
    with pytest.raises(InputError) as e:
        plan.resolve(_config(**bv), SPINE)
    assert str(e.value).startswith(key)


# ------------------------------------------------------------------ verify hook

REF = [{"item": "table8/runA/var_x", "data": "w", "paper": 0.10, "tolerance": 5e-05},
       {"item": "table8/runA/var_rho", "data": "w", "paper": 0.05, "tolerance": 0.001},
       {"item": "table9/w/original", "data": "w", "paper": -0.8},
       {"item": "table9/other/original", "data": "other", "paper": -0.9},
       {"item": "table9/old/original", "data": "old", "paper": -0.7, "always": True}]
ALL = [{"system": "s1", "var_x": 0.2, "var_rho": 0.01, "cov": 0.3, "abs_zrisk": 1.0},
       {"system": "s2", "var_x": 0.1001, "var_rho": 0.0502, "cov": 0.04, "abs_zrisk": 2.0}]


def test_prepare_matches_table8_runs_and_keeps_computed_rows():
    values = {"table9/w/original": -0.81, "table8/_all": ALL}
    rows, out = verify.prepare(copy.deepcopy(REF), values, {})
    assert "table8/_all" not in out and "table8/_all" in values  # the caller's values are not changed
    assert out["table8/runA/var_rho"] == {"value": 0.0502, "note": "matched to anonymised s2 by Var(x_i)",
                                         "system": "s2"}
    assert set(out) == {"table9/w/original"} | {f"table8/runA/{k}" for k in ("abs_zrisk", "var_rho", "var_x", "cov")}
    # rows of data this run did not compute are left out, except `always` ones
    assert [r["item"] for r in rows] == ["table8/runA/var_x", "table8/runA/var_rho", "table9/w/original",
                                         "table9/old/original"]
    t = build_verify_table(rows, out).set_index("item")
    assert bool(t.loc["table8/runA/var_rho", "ok"]) and t.loc["table9/old/original", "note"] == "not reproduced"
    # without Table 8: nothing matched
    rows, out = verify.prepare(copy.deepcopy(REF), {"table9/w/original": -0.81}, {})
    assert out == {"table9/w/original": -0.81} and len(rows) == 2


# ------------------------------------------------------------------ reference rows

def test_grouped_reference_expands_to_the_old_flat_rows():
    """workflow/resources/reference/bv.yaml (grouped) holds every item and paper value of the old flat file."""
    new = load_reference(REPO / "workflow" / "resources" / "reference" / "bv.yaml")
    try:
        old_text = subprocess.run(["git", "show", "568db04:config/reference/bv.yaml"], cwd=REPO, check=True,
                                  capture_output=True, text=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("the old reference file is not in this checkout's history")
    old = yaml.safe_load(old_text)
    # tolerances, kinds and bases were rewritten since; the paper's numbers and items are unchanged (rows only added)
    papers = {r["item"]: r["paper"] for r in new}
    assert all(papers[r["item"]] == r["paper"] for r in old)
    for b in old:  # 1 stays an int, 1.0 a float, true a bool
        assert type(papers[b["item"]]) is type(b["paper"]), b["item"]
    text = (REPO / "workflow" / "resources" / "reference" / "bv.yaml").read_text()
    assert not MACHINE_PATH.search(text) and "ARCHITECTURE" not in text and "PAPERS.md" not in text
