"""Table 1: DCG@k of Random / BM25 / LLM / Perfect rankers, by human labels and by each labeler's labels."""
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from common import dump  # noqa: E402

from irrepro.papers.ci.ranking import label_matrix, table1  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.core.verify import to_markdown  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    c, k = sm.wildcards.collection, sm.params.k
    pairs = pd.read_csv(sm.input.pairs, sep="\t", dtype={"query_id": str, "doc_id": str})
    rows, values = [], {}
    for labeler, path in zip(sm.params.labelers, sm.input.labels):
        labels = pd.read_csv(path, sep="\t", dtype={"query_id": str, "doc_id": str})
        _, grades, dists, mask = label_matrix(pairs, labels)
        t = table1(grades, dists, mask, k=k)
        for ranker, v in t.items():
            rows.append({"collection": c, "labeler": labeler, "ranker": ranker, "human": v["human"], "llm": v["llm"]})
            values[f"table1/{c}/{labeler}/llm/{ranker}"] = v["llm"]
        values[f"table1/{c}/{labeler}/human/LLM"] = t["LLM"]["human"]
        values[f"table1/{c}/{labeler}/llm_labels_overrate_BM25"] = bool(t["BM25"]["llm"] > t["BM25"]["human"])
        values[f"table1/{c}/{labeler}/llm_ranker_tops_perfect_by_own_labels"] = bool(t["LLM"]["llm"] > t["Perfect"]["llm"])
        log.info("%s %s: %s", c, labeler, {r: (round(v["human"], 2), round(v["llm"], 2)) for r, v in t.items()})
    long = pd.DataFrame(rows)
    long.to_csv(sm.output.csv, index=False, float_format="%.4f")
    # the human column does not depend on the labeler, except for the LLM ranker (each labeler ranks by its labels)
    first = long[long.labeler == sm.params.labelers[0]].set_index("ranker")
    for r in ("Random", "BM25", "Perfect"):
        values[f"table1/{c}/human/{r}"] = float(first.loc[r, "human"])
    values[f"table1/{c}/human_order_Random<BM25<Perfect"] = bool(
        first.loc["Random", "human"] < first.loc["BM25", "human"] < first.loc["Perfect", "human"])
    wide = []
    for r in ("Random", "BM25", "LLM", "Perfect"):
        rankers = [(r, None)] if r != "LLM" else [("LLM", l) for l in sm.params.labelers]
        for name, owner in rankers:
            row = {"ranker": name if owner is None else f"LLM ranker ({owner})"}
            d = long[long.ranker == r]
            row["human labels"] = float((d[d.labeler == owner] if owner else d).human.iloc[0])
            for l in sm.params.labelers:
                row[f"{l} labels"] = float(d[d.labeler == l].llm.iloc[0]) if owner in (None, l) else None
            wide.append(row)
    with open(sm.output.md, "w") as f:
        f.write(f"DCG@{k} (gain 2^r - 1) on {c}: {pairs.query_id.nunique()} queries, the rankers re-rank the "
                f"top {int(pairs['rank'].max())} candidates of the run.\n\n")
        f.write(to_markdown(pd.DataFrame(wide).round(2)))
    dump(values, sm.output.values)
