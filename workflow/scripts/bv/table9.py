"""BV-Test Table 9 on every configured collection (per-topic score tables)."""
import json
import time

import pandas as pd

from irrepro.papers.bv.biasvariance import TABLE9_COLUMNS, complete_matrix, table9_row
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores, to_matrix
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
cols = json.loads(sm.params.collections)
settings = json.loads(sm.params.settings)
with log_to(sm.log[0]) as log:
    rows, values = [], {}
    for path, (c, measure) in zip(sm.input, sorted(cols.items())):
        # systems without scores and topics with a missing score are dropped (and logged), never imputed
        X, _, _, dropped = complete_matrix(to_matrix(read_scores(path), measure))
        if dropped["systems"] or dropped["topics"]:
            log.warning("%s: dropped %d systems without %s and %d topics with a missing score: %s", c,
                        len(dropped["systems"]), measure, len(dropped["topics"]), dropped)
        t = time.perf_counter()
        # an undefined cell (e.g. fewer topics than a group size) is left empty with the reason in `note`
        r = table9_row(X, seed=sm.params.seed, strict=False, **settings)
        log.info("%s (%s, %d systems x %d topics): %s in %.2f s", c, measure, X.shape[0], X.shape[1],
                 {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}, time.perf_counter() - t)
        rows.append({"collection": c, "measure": measure, "systems": X.shape[0], "topics": X.shape[1], **r})
        for k in TABLE9_COLUMNS:
            if r[k] is not None:
                values[f"table9/{c}/{k}"] = r[k]
    t9 = pd.DataFrame(rows)
    for k in TABLE9_COLUMNS:  # keep undefined cells None (empty), never NaN
        t9[k] = pd.Series([None if r[k] is None else round(r[k], 6) for r in rows], dtype=object)
    t9.to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write(to_markdown(t9.assign(**{k: [None if v is None else round(v, 4) for v in t9[k]]
                                         for k in TABLE9_COLUMNS})))
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
