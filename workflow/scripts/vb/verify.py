"""The verify table of P4: the paper's numbers beside ours (irrepro.core.verify)."""
import json

import numpy as np
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.verify import build_verify_table, load_reference, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    reference = load_reference(sm.input.reference)
    items = json.load(open(sm.input.reproduced))
    for path in sm.input.per_topic:  # E1 on real data
        pt = pd.read_csv(path, dtype={"topic": str})
        pt = pt[pt.alpha == pt.alpha.min()]
        for gain, d in pt.groupby("gain"):
            w = d.pivot_table(index=["system", "topic", "prior"], columns="k", values="es")
            dec = np.diff(w.to_numpy(), axis=1) < -1e-12
            n_bad = int(dec.any(axis=1).sum())
            items[f"claim/E1/ES_nondecreasing_in_k/{gain}"] = {
                "value": n_bad == 0, "data": f"web2012 diversity qrels, {d.system.nunique()} runs, k in {list(w.columns)}",
                "note": f"{n_bad} of {len(w)} system-topic-prior rows decrease somewhere in k"}
    for path in sm.input.compare:
        ia = pd.read_csv(path, dtype={"topic": str})
        for (system, measure), d in ia.groupby(["system", "measure"]):
            items[f"check/web2012/{system}/{measure}"] = float(d.value.mean())
    table = build_verify_table(reference, items)
    write_verify_table(table, sm.output.csv, sm.output.md)
    log.info("verify: %d rows, %d ok", len(table), int(table.ok.fillna(False).astype(bool).sum()))
