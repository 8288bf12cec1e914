"""irrepro.tools.device_check on the CPU (the GPU figures of docs/scale.md come from the same verbs): the labels and
encodings of each configuration against the CPU's float32 ones, and another machine's arrays compared here."""
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")
from irrepro.tools import device_check  # noqa: E402

TEXTS = ["panel flutter.", "heat transfer to a blunt body in hypersonic flow",
         "scale models for thermo-aeroelastic research", "a theory of supersonic panel flutter of thin plates"]


def test_labels_encodings_and_a_comparison_that_can_fail(tmp_path):
    pairs = pd.DataFrame({"collection": ["a", "a", "b", "b"], "query": ["flutter", "flutter", "heat", "models"],
                          "text": TEXTS})
    pairs.to_csv(tmp_path / "pairs.tsv", sep="\t", index=False)
    pd.DataFrame({"text": TEXTS}).to_csv(tmp_path / "docs.tsv", sep="\t", index=False)
    assert device_check.main(["labels", str(tmp_path / "pairs.tsv"), str(tmp_path / "l.json")]) == 0
    lab = json.loads((tmp_path / "l.json").read_text())["labels"]
    assert lab["cpu/32/float32"]["vs_cpu_float32"]["max_abs_diff"] == 0 and lab["cpu/32/float32"]["settings"] == {}
    # bfloat16 is other arithmetic: the check sees it (1e-3-ish), and its settings key it
    assert lab["cpu/32/bfloat16"]["vs_cpu_float32"]["max_abs_diff"] > 1e-5
    assert "arithmetic" in lab["cpu/32/bfloat16"]["settings"]
    assert device_check.main(["encode", str(tmp_path / "docs.tsv"), str(tmp_path / "e.json")]) == 0
    enc = json.loads((tmp_path / "e.json").read_text())["encodings"]
    assert set(enc) == {"minilm-l6-v2/cpu/32", "splade-tiny/cpu/32"}
    # "another machine": these arrays, one label moved by 1e-3 -> the comparison reports exactly that
    other = tmp_path / "other"
    other.mkdir()
    labels = np.load(tmp_path / "l.labels.npz")["labels"].copy()
    labels[2] += 1e-3
    np.savez(other / "x.labels.npz", labels=labels)
    (other / "x.encodings.npz").write_bytes((tmp_path / "e.encodings.npz").read_bytes())
    assert device_check.main(["compare", str(other), str(tmp_path / "c.json"), "--pairs", str(tmp_path / "pairs.tsv"),
                              "--docs", str(tmp_path / "docs.tsv")]) == 0
    c = json.loads((tmp_path / "c.json").read_text())
    assert c["labels"]["vs_other"]["max_abs_diff"] == pytest.approx(1e-3, abs=1e-9)
    assert c["dense_vs_other"]["max_abs_diff"] == 0 and c["sparse_vs_other"]["support_differs"] == 0
