"""Import external per-topic data (TREC runs + qrels, trec_eval -q output, or score matrices) as a collection."""
import json
from pathlib import Path

import pandas as pd

from irrepro.core.evaluation import evaluate_run
from irrepro.core.logs import log_to
from irrepro.core.scores import write_scores
from irrepro.core.trec import check_run_topics, read_matrix_csv, read_qrels, read_run, read_trec_eval_q

sm = snakemake  # noqa: F821
name, spec = sm.wildcards.collection, json.loads(sm.params.spec)


def resolve(entry):
    return f"{sm.params.res}/artifacts/{entry['artifact']}" if entry.get("artifact") else entry["path"]


with log_to(sm.log[0]) as log:
    if spec["type"] == "matrix":
        frames = [read_matrix_csv(resolve(m), collection=name, measure=m["measure"]) for m in spec["matrices"]]
        df = pd.concat(frames, ignore_index=True)
    elif spec["type"] == "trec_eval":
        df = read_trec_eval_q(resolve(spec), collection=name, measures=spec.get("measures"))
    elif spec["type"] == "runs":
        qrels = read_qrels(spec["qrels"])
        measures = spec.get("measures") or sm.params.measures
        frames = []
        runs = sorted(p for p in Path(spec["runs"]).iterdir() if p.is_file() and not p.name.startswith("."))
        for i, p in enumerate(runs, 1):
            run = read_run(p, system=p.name.split(".")[0])
            if spec.get("topics", "strict") == "strict":
                check_run_topics(run, qrels, p, spec["qrels"])
            else:
                run = run[run["query_id"].isin(set(qrels["query_id"]))]
            ev = evaluate_run(run, qrels, measures)
            ev["system"], ev["collection"] = run["system"].iloc[0], name
            frames.append(ev)
            log.info("[%d/%d] evaluated %s", i, len(runs), p.name)
        df = pd.concat(frames, ignore_index=True)
    else:
        raise ValueError(spec["type"])
    write_scores(df, sm.output[0])
    log.info("%s: %d systems, %d topics, measures %s", name, df.system.nunique(), df.topic.nunique(),
             sorted(df.measure.unique()))
