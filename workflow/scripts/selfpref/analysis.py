"""labels.self_preference: per collection and computed labeler, every compared system scored by the labels and by
the qrels, each system's bias, the same-model gap, the ranking's tau / tau_AP with and without the same-model
systems, and the CI paper's interval coverage per group; one CSV per analysis, a Markdown summary, a figure."""
import json

from irrepro.core.figures import save
from irrepro.core.logs import log_to
from irrepro.core.progress import Progress
from irrepro.core.trec import read_qrels, read_run
from irrepro.labels.stage import read_labels, read_pairs
from irrepro.selfpref.report import Analysis, refit_labels, self_preference_figure, summary_markdown

sm = snakemake  # noqa: F821
p = sm.params
plan, specs, prompts = json.loads(p.plan), json.loads(p.specs), json.loads(p.prompts)
settings = dict(measures=p.measures, n_boot=p.n_boot, seed=p.seed, label_gain=p.label_gain, coverage_n=p.coverage_n,
                draws=p.coverage_draws, alpha=p.alpha, ci_n_boot=p.ci_n_boot, batches=p.batches)
with log_to(sm.log[0]) as log:
    analysis = Analysis()
    progress = Progress(sum(len(plan[c]["labelers"]) for c in plan), "self-preference (collection, labeler)",
                        unit="jobs", interval=10.0, emit=log.info)
    for c in plan:  # a collection's qrels and runs, read once for all its labelers
        qrels = read_qrels(sm.input[f"qrels_{c}"])
        runs = {s: read_run(sm.input[f"run_{c}_{s}"]) for s in plan[c]["systems"]}
        for lab in plan[c]["labelers"]:
            pairs = read_pairs(sm.input[f"pairs_{c}_{lab}"])
            labels_of = refit_labels(read_labels(sm.input[f"raw_{c}_{lab}"]), pairs, specs[lab], prompts[c])
            analysis.add(c, lab, runs, qrels, set(pairs.query_id), read_labels(sm.input[f"labels_{c}_{lab}"]),
                         plan[c]["same_model"][lab], labels_of, **settings)
            progress.advance()
    progress.close()
    out = analysis.frames()
    for key, path in (("table", sm.output.csv), ("gap", sm.output.gap), ("ranking", sm.output.agreement),
                      ("coverage", sm.output.coverage)):
        out[key].to_csv(path, index=False)
    m0 = p.measures[0]
    save(self_preference_figure(out["table"], m0, title=f"Self-preference: bias of {m0} by labels per system"),
         sm.output.pdf, sm.output.png)
    with open(sm.output.md, "w") as f:
        f.write(summary_markdown(out, analysis.notes, n_boot=p.n_boot, seed=p.seed))
    gap = out["gap"][["collection", "labeler", "measure", "gap", "gap_low", "gap_high"]]
    log.info("%d rows; gaps: %s", len(out["table"]), gap.to_string(index=False) if len(gap) else "none")
