
import pandas as pd
import pytest

from irrepro.core.scores import from_matrix, read_scores, to_matrix, write_scores
from irrepro.core.verify import VERIFY_COLUMNS, build_verify_table, load_reference, to_markdown


def test_verify_numeric_bool_missing_and_extra():
    ref = [
        {"item": "t/a", "data": "x", "paper": 0.1234, "tolerance": 0.00005},
        {"item": "t/b", "paper": 0.5, "tolerance": 0.01, "note": "n"},
        {"item": "claim", "paper": True},
        {"item": "t/missing", "paper": 1.0},
    ]
    got = {"t/a": 0.12344, "t/b": {"value": 0.52, "note": "convention"}, "claim": False, "extra": 3.0}
    t = build_verify_table(ref, got)
    assert list(t.columns) == VERIFY_COLUMNS
    rows = t.set_index("item")
    assert bool(rows.loc["t/a", "ok"]) is True
    assert rows.loc["t/a", "difference"] == pytest.approx(0.00004)
    assert bool(rows.loc["t/b", "ok"]) is False and "convention" in rows.loc["t/b", "note"]
    assert bool(rows.loc["claim", "ok"]) is False
    assert bool(rows.loc["t/missing", "ok"]) is False and "not reproduced" in rows.loc["t/missing", "note"]
    assert rows.loc["extra", "note"] == "no paper value"
    assert "| t/a |" in to_markdown(t)


def test_load_reference(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("- {item: a, paper: 1.0, tolerance: 0.1}\n")
    assert load_reference(p)[0]["item"] == "a"
    p.write_text("- {item: a}\n")
    with pytest.raises(ValueError, match="needs 'item' and 'paper'"):
        load_reference(p)


def test_scores_roundtrip_and_matrix(tmp_path):
    mat = pd.DataFrame({"s1": [0.1, 0.2], "s2": [0.3, 0.4]}, index=["10", "2"])
    long = from_matrix(mat, "c", "AP")
    p = tmp_path / "s.tsv"
    write_scores(long, p)
    back = to_matrix(read_scores(p), "AP")
    assert back.index.tolist() == ["2", "10"]  # numeric topic order
    assert back.loc["10", "s2"] == 0.3
    # same content, same bytes
    p2 = tmp_path / "s2.tsv"
    write_scores(long.sample(frac=1, random_state=1), p2)
    assert p.read_bytes() == p2.read_bytes()


def test_check_config_errors_name_the_key(tmp_path):
    from irrepro.plan import check_config
    from irrepro.errors import InputError

    base = {"collections": {}, "population": {}, "imports": {}}
    with pytest.raises(InputError, match=r"imports.m.matrices\[0\]: give exactly one of 'artifact'"):
        check_config({**base, "imports": {"m": {"type": "matrix", "matrices": [{"measure": "AP"}]}}})
    with pytest.raises(InputError, match=r"imports.t.artifact: unknown artifact 'x.csv'"):
        check_config({**base, "imports": {"t": {"type": "trec_eval", "artifact": "x.csv"}}})
    with pytest.raises(InputError, match=r"imports.r.runs: directory .* not found"):
        check_config({**base, "imports": {"r": {"type": "runs", "runs": str(tmp_path / "no"), "qrels": "q"}}})
    with pytest.raises(InputError, match=r"config key population: the grid is empty"):
        check_config({**base, "collections": {"v": {"ir_datasets": "vaswani"}}})


def test_expand_reference_over_collections_and_labelers():
    from irrepro.core.verify import expand_reference
    ref = [
        {"item": "table1/dl19-pool/human/BM25", "data": "dl19-pool", "paper": 8.25},
        {"item": "table1/dl19-pool/{labeler}/llm/BM25", "data": "dl19-pool / {labeler}", "paper": 12.93},
        {"item": "table1/{collection}/order", "data": "{collection}", "paper": True},
        {"item": "fig2/{collection}/{labeler}/x", "data": "{collection} / {labeler}", "paper": True, "note": "on {labeler}"},
    ]
    combos = [("dl19-pool", "a"), ("dl19-pool", "b"), ("vaswani", "a")]
    items = [r["item"] for r in expand_reference(ref, combos)]
    assert items == ["table1/dl19-pool/human/BM25", "table1/dl19-pool/a/llm/BM25", "table1/dl19-pool/b/llm/BM25",
                     "table1/dl19-pool/order", "table1/vaswani/order",
                     "fig2/dl19-pool/a/x", "fig2/dl19-pool/b/x", "fig2/vaswani/a/x"]
    assert expand_reference(ref, combos)[-1]["note"] == "on a"
    # without dl19-pool configured, its fixed rows are left out
    items = [r["item"] for r in expand_reference(ref, [("vaswani", "a")])]
    assert items == ["table1/vaswani/order", "fig2/vaswani/a/x"]
