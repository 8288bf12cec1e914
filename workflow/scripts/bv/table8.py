"""BV-Test Table 8 (top systems of TREC Web 2012 by ERR@20)."""
import json

from irrepro.papers.bv.biasvariance import complete_matrix, table8
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores, to_matrix
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
s = json.loads(sm.params.settings)
with log_to(sm.log[0]) as log:
    # systems without scores and topics with a missing score are dropped (logged), never imputed
    X, systems, _, dropped = complete_matrix(to_matrix(read_scores(sm.input[0]), s["measure"]))
    if dropped["systems"] or dropped["topics"]:
        log.warning("dropped %s", dropped)
    t = table8(X, systems, top=s["top"], ddof=s["ddof"])
    t.round(6).to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write(to_markdown(t.round(4)))
    # every system of the collection, for matching the paper's (named) runs to the anonymised matrix
    full = table8(X, systems, top=len(systems), ddof=s["ddof"])
    json.dump({"table8/_all": full.round(8).to_dict(orient="records")}, open(sm.output.values, "w"), indent=1)
