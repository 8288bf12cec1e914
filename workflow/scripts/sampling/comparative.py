"""Tables 5–7 (analytic Σ(Q)·n) and Figs 1–3 (accuracy against budget) on SYNTH or on a TREC substitute."""
import json

from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.papers.sampling import claims, plots, tables

sm = snakemake  # noqa: F821
p = sm.params
data = sm.wildcards.collection
with log_to(sm.log[0]) as log:
    if data == "synth":
        u, ranks, Ps, approx = tables.synth_matrices(json.loads(p.synth), p.seed)
    else:
        runs = {path.split("/")[-1][:-4]: read_run(path) for path in sm.input.runs}
        u, ranks, Ps, approx = tables.trec_substitute(runs, read_qrels(sm.input.qrels), p.depth)
    log.info("%s: %d queries x %d items, %d systems", data, u.shape[0], u.shape[1], len(Ps))
    var, table, acc = tables.comparative(u, Ps, approx, p.window, p.budgets_per_query, p.accuracy_trials, p.seed)
    table.round(6).to_csv(sm.output.tables, index=False)
    with open(sm.output.md, "w") as f:
        f.write(tables.comparative_markdown(table, data))
    acc.round(6).to_csv(sm.output.accuracy, index=False)
    plots.save(plots.fig_accuracy(acc, data, p.accuracy_trials), sm.output.pdf, sm.output.png)
    se = (tables.synth_replicate_se(json.loads(p.synth), tables.replicate_seeds(p.seed, p.synth_replicates),
                                    p.window) if data == "synth" else None)
    values = claims.comparative_values(data, table, var, se)
    if data == "synth":
        with open(sm.output.tables24, "w") as f:
            f.write("see synth_tables.csv\n")
    else:  # Tables 2–4 for three randomly chosen systems, as the paper's TREC rows
        t24 = tables.trec_single_system(u, ranks, p.seed, p.budget_per_query, p.trials, p.alpha, p.depth)
        t24.round(6).to_csv(sm.output.tables24, index=False)
        values.update(claims.trec_values(data, t24, p.trials))
    with open(sm.output.values, "w") as f:
        json.dump(values, f, indent=1, sort_keys=True)
