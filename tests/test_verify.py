
import pandas as pd
import pytest

from irrepro.core.scores import from_matrix, read_scores, to_matrix, write_scores
from irrepro.errors import InputError
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
    assert t.kind.tolist() == ["check", "check", "check", "check", "info"]
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
    p.write_text("- {item: a, paper: 1.0, tolerance: 0.1, basis: printed, basis_kind: printed}\n")
    assert load_reference(p)[0]["item"] == "a"
    p.write_text("- {item: a}\n")
    with pytest.raises(ValueError, match="needs 'item' and 'paper'"):
        load_reference(p)
    p.write_text("- {item: a, kind: proof, paper: 1.0}\n")
    with pytest.raises(ValueError, match=r"r.yaml: item 'a': unknown kind 'proof'"):
        load_reference(p)
    p.write_text("- {item: a, paper: 1.0, tolerance: 0.1}\n")  # a tolerance nobody derived
    with pytest.raises(ValueError, match=r"r.yaml: item 'a': tolerance 0.1 without a 'basis'"):
        load_reference(p)
    p.write_text("- {item: a, paper: 1.0, tolerance_se: 3}\n")
    with pytest.raises(ValueError, match="without a 'basis'"):
        load_reference(p)
    p.write_text("- {item: a, kind: claim, paper: 2, tolerance: 1, basis: the paper's own range}\n")
    assert load_reference(p)[0]["tolerance"] == 1  # a claim's tolerance is not a reproduction's
    p.write_text("- {item: a, kind: info, paper: 1.0, tolerance: 0.1}\n- {item: b, paper: true}\n")
    assert len(load_reference(p)) == 2


@pytest.mark.parametrize("paper", ["bv", "sampling", "vb", "ci"])
def test_reference_files_load_with_kinds_and_bases(paper):
    from pathlib import Path

    from irrepro.core.verify import KINDS
    rows = load_reference(Path(__file__).parents[1] / f"workflow/resources/reference/{paper}.yaml")
    assert {r.get("kind", "check") for r in rows} <= set(KINDS)
    # every explanation names the evidence function that backs it, in the paper's registry
    import importlib
    registry = getattr(importlib.import_module(f"irrepro.papers.{paper}.evidence"), "EVIDENCE", {}) \
        if any(r.get("explained") for r in rows) else {}
    for r in rows:
        if r.get("explained"):
            assert r.get("evidence", {}).get("fn") in registry, r["item"]
    for r in rows:  # every tolerance derived, none wide enough for the rows the issue named
        if (r.get("tolerance") or r.get("tolerance_se")) and not isinstance(r["paper"], bool):
            assert r.get("basis"), r["item"]


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


def test_kinds_missing_values_se_tolerance_and_scorecard():
    from irrepro.core.verify import scorecard, scorecard_line
    ref = [
        {"item": "k", "kind": "key", "paper": 1.0, "tolerance": 0.1, "basis": "b"},
        {"item": "c_ok", "paper": 2.0, "tolerance": 0.1, "basis": "b"},
        {"item": "c_expl", "paper": 2.0, "explained": "paper typo"},
        {"item": "c_bad", "paper": 2.0},
        {"item": "c_missing", "paper": 2.0},
        {"item": "c_none", "paper": 2.0},
        {"item": "mc", "paper": 5.0, "tolerance_se": 3, "tolerance": 0.005, "basis": "3 s.e."},
        {"item": "cl", "kind": "claim", "paper": True},
        {"item": "i", "kind": "info", "paper": True},
    ]
    got = {"k": 1.0, "c_ok": 2.05, "c_expl": 3.0, "c_bad": 3.0, "c_none": {"value": None, "note": "undefined: 1 topic"},
           "mc": {"value": 5.2, "se": 0.1}, "cl": False, "i": True}
    t = build_verify_table(ref, got).set_index("item")
    assert t.loc["c_none", "note"].endswith("undefined: 1 topic") and t.loc["c_none", "ok"] is False
    assert pd.isna(t.loc["c_none", "reproduced"])
    assert "not reproduced" in t.loc["c_missing", "note"]
    assert t.loc["mc", "tolerance"] == pytest.approx(0.305) and bool(t.loc["mc", "ok"]) is True
    assert "3 x s.e. 0.1 + 0.005" in t.loc["mc", "basis"]
    assert t.loc["i", "ok"] is None and t.loc["c_expl", "note"].startswith(
        "offered explanation, not met by its evidence: paper typo")
    c = scorecard(t.reset_index(), "p")
    # an explanation without computed evidence is unexplained: a note alone never explains
    assert t.loc["c_expl", "verdict"] == "unexplained"
    assert c == {"paper": "p", "checks": 6, "reproduced": 2, "explained": 0, "within_noise": 0, "paper_inconsistent": 0,
                 "unexplained": 2,
                 "not_reproducible": 2, "cross_checks": 0, "cross_checks_agree": 0, "claims": 1, "claims_hold": 0,
                 "claims_not_testable": 0, "keys": 1, "info": 1}
    assert scorecard_line(c).startswith("6 checks: 2 reproduced, 0 explained, 0 within noise, 0 paper inconsistent, "
                                        "2 unexplained, 2 not reproducible")


def test_explained_only_when_computed_evidence_holds_the_paper_value():
    """The rule: explained when the paper's value lies in [low - tol, high + tol] (against the paper), or, for a
    paper inconsistency (against ours), when ours lies there and the paper's printed value does not."""
    from irrepro.core.verify import scorecard
    ev = {"low": 1.9, "high": 2.1, "how": "h", "against": "paper"}
    ref = [
        {"item": "in", "paper": 2.0, "tolerance": 0.01, "basis": "b", "explained": "x", "evidence_result": ev},
        {"item": "edge", "paper": 2.105, "tolerance": 0.01, "basis": "b", "explained": "x", "evidence_result": ev},
        {"item": "out", "paper": 2.2, "tolerance": 0.01, "basis": "b", "explained": "x", "evidence_result": ev},
        {"item": "err", "paper": 2.0, "explained": "x", "evidence_result": {"error": "no matrix"}},
        {"item": "typo", "paper": 0.0646, "explained": "x",
         "evidence_result": {"low": 0.0676, "high": 0.0676, "against": "reproduced"}},
        {"item": "typo_self", "paper": 0.0676, "explained": "x",
         "evidence_result": {"low": 0.0676, "high": 0.0676, "against": "reproduced"}},
        {"item": "xc", "kind": "cross-check", "paper": 0.0, "tolerance": 0.1, "basis": "b"},
        {"item": "xc_bad", "kind": "cross-check", "paper": 0.0, "tolerance": 0.1, "basis": "b"},
    ]
    got = {"in": 3.0, "edge": 3.0, "out": 3.0, "err": 3.0, "typo": 0.0676, "typo_self": 0.07, "xc": 0.05,
           "xc_bad": 0.5}
    t = build_verify_table(ref, got).set_index("item")
    assert t["verdict"].to_dict() == {"in": "explained", "edge": "explained", "out": "unexplained",
                                      "err": "unexplained", "typo": "explained", "typo_self": "unexplained",
                                      "xc": "agrees", "xc_bad": "disagrees"}
    assert t.loc["in", "evidence_low"] == 1.9 and t.loc["in", "evidence_high"] == 2.1
    assert "compared with the paper" in t.loc["in", "evidence"] and t.loc["err", "evidence"] == "no matrix"
    c = scorecard(t.reset_index())
    assert (c["checks"], c["reproduced"], c["explained"], c["unexplained"]) == (6, 0, 3, 3)
    assert (c["cross_checks"], c["cross_checks_agree"]) == (2, 1)


def test_an_explanation_needs_evidence_that_could_have_failed():
    """The power rule: evidence that holds the paper's value explains the row only when its range (widened by the
    tolerance) is no wider than |paper - ours| and does not hold ours; otherwise the row is within noise, counted
    apart. A paper inconsistency (against ours) needs the same: a range no wider than the gap."""
    from irrepro.core.verify import scorecard, scorecard_line

    def row(item, paper, low, high, against="paper", tol=0.01):
        return {"item": item, "paper": paper, "tolerance": tol, "basis": "b", "explained": "x",
                "evidence_result": {"low": low, "high": high, "how": "h", "against": against}}
    ref = [row("narrow", 2.0, 1.95, 2.05),           # gap 1.0, width 0.12: could have failed, and did not
           row("wide", 2.0, 1.0, 3.5),               # holds ours (3.0) too: within the noise
           row("wider_than_gap", 2.0, 1.5, 2.9),     # excludes ours but 1.42 wide for a gap of 1.0
           row("typo", 0.0646, 0.0676, 0.0676, "reproduced", 5e-5),
           row("typo_wide", 0.1088, 0.1109, 0.1111, "reproduced", 0.001)]  # 0.0022 wide for a gap of 0.0014
    got = {"narrow": 3.0, "wide": 3.0, "wider_than_gap": 3.0, "typo": 0.0676, "typo_wide": 0.110214}
    t = build_verify_table(ref, got).set_index("item")
    assert t["verdict"].to_dict() == {"narrow": "explained", "wide": "within noise", "wider_than_gap": "within noise",
                                      "typo": "explained", "typo_wide": "within noise"}
    assert "holds ours (3) too" in t.loc["wide", "evidence"]
    assert "wider than the difference it explains (1)" in t.loc["wider_than_gap", "evidence"]
    assert "within the noise" not in t.loc["narrow", "evidence"]
    # the note says what the verdict says: only an explained row calls its explanation "explained"
    assert t.loc["narrow", "note"] == "explained: x"
    assert t.loc["wide", "note"] == "offered explanation, within noise only: x"
    c = scorecard(t.reset_index())
    assert (c["explained"], c["within_noise"], c["unexplained"]) == (2, 3, 0)
    assert "2 explained, 3 within noise, 0 paper inconsistent, 0 unexplained" in scorecard_line(c)


def test_a_proof_from_the_paper_makes_a_row_paper_inconsistent_whatever_ours():
    """Evidence ``against: paper_bound`` (a bound from the paper's printed numbers alone): a printed value outside it
    is "paper inconsistent", whatever ours; inside it the proof fails and the row is unexplained; a reproduced row
    stays reproduced."""
    from irrepro.core.verify import scorecard

    def row(item, paper, tol=0.01):
        return {"item": item, "paper": paper, "tolerance": tol, "basis": "b", "explained": "proof",
                "evidence_result": {"low": 0.0, "high": 2.0, "how": "bound", "against": "paper_bound"}}
    ref = [row("out", 2.5), row("out_ours_far", 2.5), row("in", 1.9), row("ok", 2.5)]
    got = {"out": 1.0, "out_ours_far": 50.0, "in": 1.0, "ok": 2.505}
    t = build_verify_table(ref, got).set_index("item")
    assert t["verdict"].to_dict() == {"out": "paper inconsistent", "out_ours_far": "paper inconsistent",
                                      "in": "unexplained", "ok": "reproduced"}
    assert "a proof from the paper's own numbers" in t.loc["out", "evidence"]
    assert t.loc["out", "note"] == "paper inconsistent: proof"
    assert scorecard(t.reset_index())["paper_inconsistent"] == 2


def test_a_claim_without_data_is_not_testable_never_failed():
    """A claim whose data are not public (no value) is "not testable", counted apart; a claim our data contradict
    fails; the one-line scorecard counts holds over the testable claims."""
    from irrepro.core.verify import scorecard, scorecard_line
    ref = [{"item": f"c{i}", "kind": "claim", "paper": True} for i in range(4)]
    got = {"c0": True, "c1": False, "c2": {"value": None, "note": "the pipelines' outputs are not public"}}
    t = build_verify_table(ref, got).set_index("item")
    assert t["verdict"].to_dict() == {"c0": "holds", "c1": "fails", "c2": "not testable", "c3": "not testable"}
    c = scorecard(t.reset_index())
    assert (c["claims"], c["claims_hold"], c["claims_not_testable"]) == (4, 1, 2)
    assert scorecard_line(c).endswith("1 of 2 testable claims hold, 2 not testable")


def test_reference_never_sets_evidence_values(tmp_path):
    from irrepro.core.verify import check_reference
    with pytest.raises(InputError, match="evidence_low is computed"):
        check_reference([{"item": "a", "paper": 1.0, "explained": "x", "evidence_low": 0.9}], "ref.yaml")
    with pytest.raises(InputError, match="evidence must be a mapping with 'fn'"):
        check_reference([{"item": "a", "paper": 1.0, "explained": "x", "evidence": "topic_subsets"}], "ref.yaml")


def test_attach_evidence_calls_the_registry_and_keeps_errors():
    from irrepro.core.verify import attach_evidence

    def reading(row, data, values, scale):
        if "m" not in data:
            raise InputError("no matrix")
        return {"low": data["m"] * scale, "high": data["m"] * scale, "how": "m x scale", "against": "paper"}
    rows = [{"item": "a", "paper": 1.0, "explained": "x", "evidence": {"fn": "reading", "scale": 2}},
            {"item": "b", "paper": 1.0, "explained": "x", "evidence": {"fn": "nope"}}]
    got = attach_evidence(rows, {"reading": reading}, {"m": 0.5})
    assert got[0]["evidence_result"]["low"] == 1.0 and "no evidence function 'nope'" in got[1]["evidence_result"][
        "error"]
    assert "no matrix" in attach_evidence(rows, {"reading": reading}, {})[0]["evidence_result"]["error"]


def test_scorecard_reads_the_csv_back(tmp_path):
    from irrepro.core.verify import scorecard, write_verify_table
    t = build_verify_table([{"item": "a", "paper": 1.0}, {"item": "b", "paper": 1.0}, {"item": "c", "kind": "info",
                                                                                         "paper": 1.0}],
                           {"a": 1.0, "c": 2.0})
    write_verify_table(t, tmp_path / "v.csv", tmp_path / "v.md", header="**x**: line")
    back = pd.read_csv(tmp_path / "v.csv")
    assert list(back.columns) == VERIFY_COLUMNS
    assert scorecard(back) == scorecard(t)
    assert (tmp_path / "v.md").read_text().startswith("**x**: line")


def test_verify_figure_draws_checks():
    from irrepro.core.figures import verify_figure
    t = build_verify_table([{"item": "a", "paper": 1.0, "tolerance": 0.1, "basis": "b"}, {"item": "b", "paper": 2.0},
                            {"item": "c", "paper": True}], {"a": 1.05, "c": True})
    fig = verify_figure(t, "x")
    labels = [lab.get_text() for lab in fig.axes[0].get_yticklabels()]
    assert len(labels) == 2 and labels[1].endswith("ours -")


def test_sampling_hook_keeps_only_configured_data_and_every_configured_row():
    from irrepro.core.verify import verify_paper
    ref = [{"item": "true/OPT", "paper": 284.4}, {"item": "true/REV-75", "paper": 277.63},
           {"item": "claim/u_hat_unbiased", "kind": "claim", "paper": True},
           {"item": "vaswani/claim/u_hat_unbiased", "kind": "claim", "paper": True},
           {"item": "cranfield/claim/u_hat_unbiased", "kind": "claim", "paper": True}]
    t = verify_paper("sampling", ref, {"true/OPT": 284.4}, {"systems": ["OPT"], "collections": ["vaswani"]})
    assert t["item"].tolist() == ["true/OPT", "claim/u_hat_unbiased", "vaswani/claim/u_hat_unbiased"]
    assert t["ok"].tolist() == [True, False, False]  # configured but not computed: a row, never a silence


def test_verify_panels_keep_a_normal_size_with_one_panel_per_table(tmp_path):
    """verify.png: one panel per table (the item's first part), cells by verdict; a long table is split into panels
    and the figure keeps a normal size (a 300-row table was a 1366 x 4803 px strip before)."""
    from PIL import Image

    from irrepro.core.figures import save, verify_panels
    ref = [{"item": f"table9/c{i}/col{j}", "paper": 0.5, "tolerance": 0.01, "basis": "b"}
           for i in range(40) for j in range(6)]
    ref += [{"item": f"table8/r{i}/x", "paper": 1.0} for i in range(8)] + [{"item": "true/OPT", "paper": 1.0}]
    t = build_verify_table(ref, {r["item"]: 0.5 for r in ref})
    fig = verify_panels(t, "p")
    titles = [a.get_title(loc="left") for a in fig.axes if a.get_title(loc="left")]
    assert titles == ["table9 (1)", "table9 (2)", "table8", "items"]
    w, h = fig.get_size_inches()
    assert w == 16 and h <= 22
    save(fig, tmp_path / "v.pdf", tmp_path / "v.png")
    W, H = Image.open(tmp_path / "v.png").size
    assert W < 2600 and H < 3400


@pytest.mark.parametrize("row, why", [
    # the Table 8 Var(rho) row as it once was: a data difference turned into a tolerance, accepted as reproduced
    ({"item": "table8/r/var_rho", "paper": 0.0826, "tolerance": 0.001,
      "basis": "documented data difference: Eq. 16 on the paper's own rows gives Var(x_T) = 0.1253-0.1255"},
     "basis_kind None"),
    ({"item": "a", "paper": 1.0, "tolerance": 0.001, "basis": "the paper's other data", "basis_kind": "data"},
     "basis_kind 'data'"),
    ({"item": "a", "paper": 1.0, "tolerance": 0.001, "basis_kind": "printed",
      "basis": "documented data difference: the paper had extra runs"}, "names a 'data difference'"),
    ({"item": "a", "paper": 2.15, "tolerance": 0.32, "basis_kind": "printed",
      "basis": "15% of the paper's value: our scaling is inferred, not printed"}, "names a 'inferred'"),
    ({"item": "a", "paper": 1.0, "tolerance_se": 3, "basis": "3 s.e. of our replicates", "basis_kind": "printed"},
     "tolerance_se .* is Monte-Carlo error"),
])
def test_a_check_tolerance_rests_on_printed_precision_monte_carlo_error_or_float_noise(tmp_path, row, why):
    """"Reproduced" has one rule: a check row whose tolerance declares another basis is refused by load_reference
    and by verify_paper alike, naming the file and the item."""
    import yaml

    from irrepro.core.verify import verify_paper
    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump([row]))
    with pytest.raises(ValueError, match=f"r.yaml: item '{row['item']}': .*{why}"):
        load_reference(p)
    with pytest.raises(ValueError, match=why):
        verify_paper("nosuchpaper", [row], {row["item"]: row["paper"]})
    for kind in ("printed", "monte-carlo", "float"):  # the same row on an accepted basis loads
        ok = {**row, "basis": "half a unit of the printed 4 decimals", "basis_kind": kind}
        if ok.get("tolerance_se") and kind != "monte-carlo":
            continue
        p.write_text(yaml.safe_dump([ok]))
        assert load_reference(p)[0]["basis_kind"] == kind


def test_an_estimate_explains_only_when_its_range_with_two_standard_errors_excludes_ours():
    """Evidence that is an estimate (a mean of ratios) carries its standard error: the range the power rule sees is
    widened by 2 s.e., so a point estimate whose noise reaches our value is within noise, not explained (today's
    sampling half-width rows: ours x 1.0328 with s.e. 0.026 x ours)."""
    from irrepro.core.verify import attach_evidence, widen_by_se
    ref = [{"item": "hw", "paper": 2.21, "tolerance": 0.0, "explained": "the spread differs",
            "evidence": {"fn": "ratio"}}]
    for se, verdict in ((0.026 * 2.14, "within noise"), (0.002, "explained")):
        reg = {"ratio": lambda row, data, values, se=se: {"low": 2.14 * 1.0328, "high": 2.14 * 1.0328, "se": se,
                                                           "against": "paper", "how": "ours x mean ratio"}}
        t = build_verify_table(attach_evidence(ref, reg, {}), {"hw": 2.14})
        assert t.verdict.iloc[0] == verdict, (se, t.evidence.iloc[0])
        assert t.evidence_low.iloc[0] == pytest.approx(2.14 * 1.0328 - 2 * se)
        assert "2 s.e. of the estimate" in t.evidence.iloc[0]
    # without its se the same point estimate would have explained the row: the widening is what changes it
    bare = [{**ref[0]}]
    reg = {"ratio": lambda row, data, values: {"low": 2.21, "high": 2.21, "against": "paper", "how": "x"}}
    assert build_verify_table(attach_evidence(bare, reg, {}), {"hw": 2.14}).verdict.iloc[0] == "explained"
    with pytest.raises(ValueError, match="standard error of an estimate"):
        widen_by_se({"low": 1.0, "high": 1.0, "se": float("nan")})
    assert widen_by_se({"low": 1.0, "high": 2.0}) == {"low": 1.0, "high": 2.0}
