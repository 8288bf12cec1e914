"""The CI paper's plan (irrepro.papers.ci.plan.resolve), its verify hook (irrepro.papers.ci.verify.prepare) and
the grouped reference file (workflow/resources/reference/ci.yaml expands to the rows of the former flat file)."""
import copy
from types import SimpleNamespace

import pytest

from conftest import MACHINE_PATH, REPO
from irrepro.core.verify import expand_reference, load_reference
from irrepro.errors import InputError
from irrepro.papers.ci.plan import resolve
from irrepro.papers.ci.verify import prepare

CONFIG = {
    "labels": {"collections": {"dl19-pool": {"labelers": ["flant5", "llama"]}, "vaswani": {"labelers": ["smollm2"]}}},
    "ci": {"collections": ["vaswani", "dl19-pool"]},
}


def spine(labels=True):
    return SimpleNamespace(V="results/t", papers={"labels": object()} if labels else {})


def test_resolve_good_config():
    p = resolve(CONFIG, spine())
    assert p.collections == ["vaswani", "dl19-pool"]
    assert p.combos == [("vaswani", "smollm2"), ("dl19-pool", "flant5"), ("dl19-pool", "llama")]
    assert p.values[:2] == ["results/t/ci/values/table1_vaswani.json", "results/t/ci/values/table1_dl19-pool.json"]
    assert p.values[2:5] == [f"results/t/ci/values/fig2_{c}_{l}.json" for c, l in p.combos]
    assert len(p.values) == 2 + 3 * 3 and p.values[-1] == "results/t/ci/values/fig4_dl19-pool_llama.json"
    assert p.verify_context == {"combos": [["vaswani", "smollm2"], ["dl19-pool", "flant5"], ["dl19-pool", "llama"]]}
    cfg = copy.deepcopy(CONFIG)
    cfg["ci"]["collections"] = []
    assert resolve(cfg, spine()).combos == [] and resolve(cfg, spine()).values == []


def test_labelers_of_a_query_sample_are_left_out_of_the_ci_paper():
    """A labeler that labels a sample of the pairs (labels.collections.<c>.sample) has no label for the other
    pairs, which Table 1 and Figs 2-4 need."""
    cfg = copy.deepcopy(CONFIG)
    cfg["labels"]["collections"]["dl19-pool"]["sample"] = {"flant5": 5}
    assert resolve(cfg, spine()).combos == [("vaswani", "smollm2"), ("dl19-pool", "llama")]


def test_errors_name_their_key():
    with pytest.raises(InputError, match=r"^config key papers: `ci` needs the `labels` stage"):
        resolve(CONFIG, spine(labels=False))
    cfg = copy.deepcopy(CONFIG)
    cfg["ci"]["collections"].append("robust04")
    with pytest.raises(InputError, match=r"^config key ci.collections: 'robust04' has no entry under labels"):
        resolve(cfg, spine())


def test_grouped_reference_equals_the_flat_rows():
    new = load_reference(REPO / "workflow/resources/reference/ci.yaml")
    old = load_reference(REPO / "tests/data/ci_reference_flat.yaml")
    assert new == old
    assert not any(MACHINE_PATH.search(str(v)) for r in new for v in r.values())


def test_prepare_expands_over_the_combos():
    rows = load_reference(REPO / "workflow/resources/reference/ci.yaml")
    combos = [["dl19-pool", "flant5"], ["dl19-pool", "llama"], ["vaswani", "smollm2"]]
    values = {"x": 1}
    out, v = prepare(rows, values, {"combos": combos})
    assert v == values and out == expand_reference(rows, [tuple(c) for c in combos])
    items = [r["item"] for r in out]
    assert "table1/dl19-pool/human/BM25" in items and "fig2/vaswani/smollm2/ppi_covers_at_max_n" in items
    assert "table1/vaswani/smollm2/human/LLM" not in items  # the paper's TREC-DL cells: dl19-pool's labelers only
    assert items.count("table1/dl19-pool/flant5/llm/BM25") == 1
    # no CI collection configured: only the rows without a template remain (the human Table 1 cells)
    assert prepare(rows, {}, {})[0] == [r for r in expand_reference(rows, []) if "{" not in r["item"]]
