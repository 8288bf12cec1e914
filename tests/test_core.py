"""The core helpers: grouped reference rows, the writers, the one DCG definition, the plan."""
import re
import json

import numpy as np
import pandas as pd
import pytest

from irrepro.core import gain, io
from irrepro.core.verify import expand_groups, load_reference, verify_paper
from irrepro.errors import InputError


def test_grouped_reference_expands_to_flat_rows(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("""
groups:
  - data: d1
    tolerance: 0.5
    basis: b
    basis_kind: printed
    note: shared
    rows:
      - {item: a, paper: 1.0}
      - {item: b, paper: 2.0, note: own}
      - {item: c, paper: 3.0, tolerance: 0}
rows:
  - {item: z, paper: true}
""")
    rows = load_reference(p)
    assert rows == [
        {"item": "a", "paper": 1.0, "data": "d1", "tolerance": 0.5, "basis": "b", "basis_kind": "printed",
         "note": "shared"},
        {"item": "b", "paper": 2.0, "data": "d1", "tolerance": 0.5, "basis": "b", "basis_kind": "printed",
         "note": "own"},
        {"item": "c", "paper": 3.0, "data": "d1", "tolerance": 0, "basis": "b", "basis_kind": "printed",
         "note": "shared"},
        {"item": "z", "paper": True},
    ]
    assert expand_groups([{"item": "x", "paper": 1}]) == [{"item": "x", "paper": 1}]


def test_reference_row_without_paper_value_is_an_error(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("groups:\n  - data: d\n    rows:\n      - {item: a}\n")
    with pytest.raises(ValueError, match="row 0 needs"):
        load_reference(p)


def test_verify_paper_without_hook_compares_rows():
    printed = {"basis": "half a unit of the printed decimal", "basis_kind": "printed"}
    t = verify_paper("nosuchpaper", [{"item": "a", "paper": 1.0, "tolerance": 0.1, **printed}], {"a": 1.05, "b": 2})
    assert t.ok.tolist() == [True, None]
    t = verify_paper("nosuchpaper", [{"item": "a", "paper": 1.0, "tolerance": 0.01, **printed}], {"a": 1.05})
    assert t.ok.tolist() == [False]


def test_writers_round_trip(tmp_path):
    io.write_values({"b": np.float64(0.5), "a": 1}, tmp_path / "v.json")
    assert list(json.loads((tmp_path / "v.json").read_text())) == ["a", "b"]
    io.write_values({"b": 1, "a": 2}, tmp_path / "w.json", sort_keys=False)
    assert io.read_values([tmp_path / "v.json", tmp_path / "w.json"]) == {"a": 2, "b": 1}
    df = pd.DataFrame({"x": ["p", "q"], "y": [0.123456789, 2.0]})
    io.write_table(df, tmp_path / "t.csv", tmp_path / "t.md", float_format="%.3f")
    assert (tmp_path / "t.csv").read_text() == "x,y\np,0.123\nq,2.000\n"
    assert (tmp_path / "t.md").read_text().splitlines()[2] == "| p | 0.1235 |"


def test_dcg_discount_and_weights():
    assert np.allclose(gain.discount([1, 2, 3]), [1.0, 1 / np.log2(3), 0.5])
    w = gain.dcg_weights(2, depth=4)
    assert w.tolist() == [1.0, 1 / np.log2(3), 0.0, 0.0]
    assert gain.exp_gain([0, 1, 3]).tolist() == [0.0, 1.0, 7.0]
    with pytest.raises(InputError):
        gain.dcg_weights(0)


def test_plan_resolves_the_spine():
    from irrepro.plan import resolve

    cfg = {"version": "t", "resources_dir": "res", "mirror": None, "papers": [],
           "collections": {"vaswani": {"ir_datasets": "vaswani"}}, "imports": {"m": {"type": "matrix"}},
           "population": {"bm25": {"k1": [0.9], "b": [0.4]}, "dph": None, "pl2": None, "qld": None,
                          "rm3": {"enabled": False}}, "retrieval": {"stemmer": "porter2", "stopwords": "terrier"}}
    plan = resolve(cfg, check_ids=False)
    assert plan.V == "results/t" and plan.collections == ["vaswani"] and plan.imports == ["m"]
    assert re.fullmatch(r"res/indexes/vaswani-[0-9a-f]{16}\.pisa", plan.index("vaswani"))
    assert plan.all_scored == ["vaswani", "m"] and plan.systems["vaswani"] == ["bm25_k1-0.9_b-0.4"]
    assert plan.papers == {}


def test_config_readme_holds_the_parameter_table_of_the_schemas():
    """config/README.md's table is generated from the schemas (`irrepro config-doc`); a key added to a schema
    without regenerating the table fails here."""
    from pathlib import Path

    from irrepro.configdoc import parameter_table

    repo = Path(__file__).resolve().parents[1]
    text = (repo / "config" / "README.md").read_text()
    begin, end = "<!-- parameter-table:begin -->\n", "<!-- parameter-table:end -->"
    assert begin in text and end in text
    assert text.split(begin)[1].split(end)[0].strip() == parameter_table(repo / "workflow" / "schemas").strip(), \
        "config/README.md is stale: regenerate with `irrepro config-doc`"


def test_plan_knows_which_measures_each_score_table_holds():
    from irrepro.plan import resolve

    cfg = {"version": "t", "resources_dir": "res", "papers": [], "measures": ["AP", "P@10"],
           "collections": {"vaswani": {"ir_datasets": "vaswani"}},
           "imports": {"m": {"type": "matrix", "matrices": [{"measure": "ERR@20", "path": "x"}]},
                       "t": {"type": "trec_eval", "path": "y"}},
           "population": {"bm25": {"k1": [0.9], "b": [0.4]}},
           "retrieval": {"stemmer": "porter2", "stopwords": "terrier"}}
    plan = resolve(cfg, check_ids=False)
    plan.require_measure("bv.fig1.collections", "vaswani", "AP")
    plan.require_measure("bv.fig1.collections", "t", "anything")  # trec_eval without a filter: unknown until read
    with pytest.raises(InputError, match=r"config key bv.table9.collections: 'm' has no 'AP'.*imports.m"):
        plan.require_measure("bv.table9.collections", "m", "AP")
    with pytest.raises(InputError, match=r"'vaswani' has no 'nDCG@10'.*`measures`"):
        plan.require_measure("x.y", "vaswani", "nDCG@10")
    with pytest.raises(InputError, match="neither in `collections` nor in `imports`"):
        plan.require_measure("x.y", "nope", "AP")


def test_import_measures_are_checked_with_the_config(tmp_path):
    from irrepro.plan import check_config

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.run").write_text("1 Q0 d 1 1.0 a\n")
    (tmp_path / "q.txt").write_text("1 0 d 1\n")
    spec = {"type": "runs", "runs": str(runs), "qrels": str(tmp_path / "q.txt"), "measures": ["AP", "Foo"]}
    with pytest.raises(InputError, match=r"config key imports.mine.measures\[1\]: ir_measures cannot parse measure 'Foo'"):
        check_config({"imports": {"mine": spec}})
    spec["measures"] = ["AP", "nDCG@10", "DCG@10"]
    check_config({"imports": {"mine": spec}})
