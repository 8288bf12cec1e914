"""BV-Test Table 9 on every configured collection (per-topic score tables)."""
import json
import time

import pandas as pd

from irrepro.biasvariance import TABLE9_COLUMNS, table9_row
from irrepro.logs import log_to
from irrepro.scores import read_scores, to_matrix
from irrepro.verify import to_markdown

sm = snakemake  # noqa: F821
cols = json.loads(sm.params.collections)
settings = json.loads(sm.params.settings)
with log_to(sm.log[0]) as log:
    rows, values = [], {}
    for path, (c, measure) in zip(sm.input, sorted(cols.items())):
        X = to_matrix(read_scores(path), measure).dropna(axis=0).to_numpy().T  # systems x topics
        t = time.perf_counter()
        r = table9_row(X, seed=sm.params.seed, **settings)
        log.info("%s (%s, %d systems x %d topics): %s in %.2f s", c, measure, X.shape[0], X.shape[1],
                 {k: round(v, 4) for k, v in r.items()}, time.perf_counter() - t)
        rows.append({"collection": c, "measure": measure, "systems": X.shape[0], "topics": X.shape[1], **r})
        for k in TABLE9_COLUMNS:
            values[f"table9/{c}/{k}"] = r[k]
    t9 = pd.DataFrame(rows)
    t9.round(6).to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write(to_markdown(t9.round(4)))
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
