"""labels.self_preference: per collection and computed labeler, every compared system scored by the labels and by
the qrels, each system's bias, the same-model gap, the ranking's tau / tau_AP with and without the same-model
systems, and the CI paper's interval coverage per group; one CSV per analysis, a Markdown summary, a figure."""
import json

import pandas as pd

from irrepro.core.figures import save
from irrepro.core.logs import log_to
from irrepro.core.progress import Progress
from irrepro.core.trec import read_qrels, read_run
from irrepro.labels.prompts import get_prompt
from irrepro.labels.stage import finish_labels, labeler_spec, read_pairs
from irrepro.selfpref.report import Analysis, self_preference_figure, summary_markdown

sm, p = snakemake, snakemake.params  # noqa: F821
plan, specs, prompts = json.loads(p.plan), json.loads(p.specs), json.loads(p.prompts)
with log_to(sm.log[0]) as log:
    units, read, an = [(c, n) for c in plan for n in plan[c]["labelers"]], {}, Analysis()
    progress = Progress(len(units), "self-preference (collection, labeler)", unit="jobs", interval=10.0, emit=log.info)
    for c, lab in units:
        if c not in read:  # a collection's qrels and runs, read once for all its labelers
            read[c] = read_qrels(sm.input[f"qrels_{c}"]), {s: read_run(sm.input[f"run_{c}_{s}"]) for s in plan[c]["systems"]}
        pairs, (raw, labels) = read_pairs(sm.input[f"pairs_{c}_{lab}"]), [
            pd.read_csv(sm.input[f"{w}_{c}_{lab}"], sep="\t", dtype={"query_id": str, "doc_id": str}) for w in ("raw", "labels")]

        def labels_of(drawn, raw=raw, pairs=pairs, lspec=labeler_spec(specs[lab]), prompt=get_prompt(prompts[c])):
            return finish_labels(raw, pairs, lspec, prompt, fit_queries=drawn)  # a calibrated labeler refitted on a draw

        an.add(c, lab, read[c][1], read[c][0], set(pairs.query_id), labels, plan[c]["same_model"][lab], labels_of,
               measures=p.measures, n_boot=p.n_boot, seed=p.seed, label_gain=p.label_gain, coverage_n=p.coverage_n,
               coverage_draws_=p.coverage_draws, alpha=p.alpha, ci_n_boot=p.ci_n_boot, batches=p.batches)
        progress.advance()
    progress.close()
    out = an.frames()
    for key, path in (("table", sm.output.csv), ("gap", sm.output.gap), ("ranking", sm.output.agreement),
                      ("coverage", sm.output.coverage)):
        out[key].to_csv(path, index=False)
    m0 = p.measures[0]
    save(self_preference_figure(out["table"], m0, title=f"Self-preference: bias of {m0} by labels per system"),
         sm.output.pdf, sm.output.png)
    with open(sm.output.md, "w") as f:
        f.write(summary_markdown(out, an.notes, n_boot=p.n_boot, seed=p.seed))
    log.info("%d rows; gaps: %s", len(out["table"]), out["gap"][["collection", "labeler", "measure", "gap", "gap_low",
             "gap_high"]].to_string(index=False) if len(out["gap"]) else "none")
