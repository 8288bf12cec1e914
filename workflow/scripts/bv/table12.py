"""BV-Test Table 12 and Figs 2–3 on user-supplied TREC Session-track runs (config bv.table12.tracks).

Per track: every run file is evaluated (NDCG@10 by default) per session against the track's qrels (through the
optional session -> topic map), then per condition (RL1..RL4) the Bias²–Var correlation across systems on the
scores and on max–min normalised scores; the figure shows Bias² + Var per system and condition (Figs 2–3)."""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from irrepro.papers.bv.biasvariance import session_scores, session_tradeoffs  # noqa: E402
from irrepro.errors import InputError  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.core.trec import read_qrels, read_run  # noqa: E402
from irrepro.core.verify import to_markdown  # noqa: E402

sm = snakemake  # noqa: F821
tracks = json.loads(sm.params.tracks)
measure, target = sm.params.measure, sm.params.target


def read_map(path):
    m = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) < 2:
                raise InputError("expected 'session topic' on each line", path=path, line=lineno)
            m[parts[0]] = parts[1]
    return m


with log_to(sm.log[0]) as log:
    tables, systems, values = [], [], {}
    for name in sorted(tracks):
        spec = tracks[name]
        files = sorted(p for p in Path(spec["runs"]).iterdir() if p.is_file() and not p.name.startswith("."))
        runs = {p.name: read_run(p, system=p.name) for p in files}
        qrels = read_qrels(spec["qrels"])
        tmap = read_map(spec["topic_map"]) if spec.get("topic_map") else None
        scores = session_scores(runs, qrels, measure, spec.get("pattern") or sm.params.pattern, tmap)
        t, per = session_tradeoffs(scores, spec["conditions"], target)
        log.info("%s: %d runs, %d sessions\n%s", name, len(runs), scores["topic"].nunique(), t)
        tables.append(t.assign(track=name, measure=measure))
        systems.append(per.assign(track=name))
        for _, r in t.iterrows():
            for col, key in (("pearson", "score"), ("pearson_norm", "score_norm")):
                if r[col] is not None and not pd.isna(r[col]):
                    values[f"table12/{name}/{r['condition']}/{key}"] = float(r[col])
        first = spec["conditions"][0]
        for col, key in (("best", "best"), ("best_norm", "best_norm")):
            for cond in spec["conditions"]:
                values[f"fig_session/{name}/{key}/{cond}"] = int(per.loc[per["condition"] == cond, col].sum())
        # systems whose Bias² + Var on a later condition is below the one on the first (initial-query) condition
        wide = per.pivot(index="system", columns="condition", values="total").dropna()
        later = [c for c in spec["conditions"][1:] if c in wide]
        if later:
            values[f"fig_session/{name}/better_than_{first}"] = int((wide[later].min(axis=1) < wide[first]).sum())
    table = pd.concat(tables, ignore_index=True)[["track", "condition", "measure", "systems", "sessions", "pearson",
                                                  "pearson_norm", "note"]]
    for col in ("pearson", "pearson_norm"):
        table[col] = pd.Series([None if v is None or pd.isna(v) else round(float(v), 6) for v in table[col]],
                               dtype=object)
    table.to_csv(sm.output.csv, index=False)
    per = pd.concat(systems, ignore_index=True)
    per.to_csv(sm.output.systems, index=False, float_format="%.6f")
    with open(sm.output.md, "w") as f:
        f.write(f"{measure} and {measure}' (max-min normalised); target = per-session maximum within the "
                f"{target}\n\n")
        f.write(to_markdown(table.assign(
            pearson=table["pearson"].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.4f}"),
            pearson_norm=table["pearson_norm"].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.4f}"))))
    names = sorted(tracks)
    fig, axes = plt.subplots(len(names), 2, figsize=(10, 3.2 * len(names)), squeeze=False)
    for row, name in zip(axes, names):
        d = per[per["track"] == name]
        for ax, col, lab in ((row[0], "total", measure), (row[1], "total_norm", measure + "'")):
            w = d.pivot(index="system", columns="condition", values=col)
            w = w[[c for c in tracks[name]["conditions"] if c in w]]
            w = w.loc[w.iloc[:, 0].sort_values().index]
            x = np.arange(len(w))
            for cond in w.columns:
                ax.plot(x, w[cond], "o-", ms=3, label=cond)
            ax.set_title(f"{name}: Bias² + Var of {lab}", fontsize=9)
            ax.set_xlabel("systems")
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(sm.output.png, dpi=150)
    fig.savefig(sm.output.pdf)
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
