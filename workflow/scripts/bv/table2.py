"""BV-Test Table 2: the toy example, Bias² with c = mean of the target system (0.8) and with c = 1."""
import json

import numpy as np
import pandas as pd

from irrepro.papers.bv.biasvariance import bias_variance
from irrepro.core.logs import log_to
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
X = np.array([[0.8, 0.9, 0.4], [0.5, 0.6, 0.7], [0.3, 0.6, 0.3]])  # the paper's Table 2
with log_to(sm.log[0]):
    t = bias_variance(X).rename(columns={"bias2": "bias2_c_target"})
    t["bias2_c_1"] = bias_variance(X, c=1)["bias2"]
    t.insert(0, "system", ["f1", "f2", "f3"])
    t.round(6).to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write(to_markdown(t.round(4)))
    values = {"table2/target_mean": float(X.max(axis=0).mean())}
    for i, s in enumerate(["f1", "f2", "f3"]):
        values[f"table2/{s}/mean"] = float(t["mean"][i])
        values[f"table2/{s}/bias2_c_target"] = float(t["bias2_c_target"][i])
        values[f"table2/{s}/bias2_c_1"] = float(t["bias2_c_1"][i])
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
