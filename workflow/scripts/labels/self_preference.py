"""labels.self_preference: per collection and computed labeler, every compared system scored by the labels and by
the qrels (the CI paper's evaluator), each system's bias with its interval over topics, the same-model gap, the
system ranking's tau / tau_AP with and without the same-model systems, and the CI paper's interval coverage per
group from repeated draws of human-labelled queries; one CSV per analysis, a Markdown summary, a figure."""
import json

import pandas as pd

from irrepro.core.figures import save
from irrepro.core.logs import log_to
from irrepro.core.progress import Progress
from irrepro.core.trec import read_qrels, read_run
from irrepro.labels import selfpref as sp
from irrepro.labels.plots import self_preference_figure
from irrepro.labels.prompts import get_prompt
from irrepro.labels.stage import finish_labels, labeler_spec, read_pairs
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
p = sm.params
plan, specs, prompts = json.loads(p.plan), json.loads(p.specs), json.loads(p.prompts)
with log_to(sm.log[0]) as log:
    tables, gaps, ranks, covs, notes = [], [], [], [], []
    units = [(c, n) for c in plan for n in plan[c]["labelers"]]
    progress = Progress(len(units), "self-preference (collection, labeler)", unit="jobs", interval=10.0,
                        emit=log.info)
    read = {}  # collection -> (its qrels, its runs): read once for all its labelers
    for c, lab in units:
        spec = plan[c]
        flags = spec["same_model"][lab]
        if c not in read:
            read[c] = (read_qrels(sm.input[f"qrels_{c}"]),
                       {s: read_run(sm.input[f"run_{c}_{s}"]) for s in spec["systems"]})
        all_qrels, runs = read[c]
        pairs = read_pairs(sm.input[f"pairs_{c}_{lab}"])
        labels = pd.read_csv(sm.input[f"labels_{c}_{lab}"], sep="\t", dtype={"query_id": str, "doc_id": str})
        queries = set(pairs.query_id)
        qrels = all_qrels[all_qrels.query_id.astype(str).isin(queries)]  # the labeler's queries (its sample, if any)
        by_h, by_l = sp.label_score_tables(runs, qrels, labels, p.measures, collection=c, label_gain=p.label_gain)
        kw = dict(labeler=lab, n_boot=p.n_boot, seed=p.seed)
        tables.append(sp.self_preference_table(by_h, by_l, flags, **kw).assign(collection=c))
        if any(flags.values()) and not all(flags.values()):
            gaps.append(sp.self_preference_gap(by_h, by_l, flags, **kw).assign(collection=c))
        else:
            notes.append(f"{c}, {lab}: no gap (no compared system shares the labeler's model)")
        ranks.append(sp.ranking_agreement(by_h, by_l, flags, labeler=lab).assign(collection=c))
        cov = {"n": p.coverage_n, "draws": p.coverage_draws}
        N = len(queries)
        if cov["draws"] and cov["n"] <= N - 2:
            lspec = labeler_spec(specs[lab])
            raw = pd.read_csv(sm.input[f"raw_{c}_{lab}"], sep="\t", dtype={"query_id": str, "doc_id": str})
            prompt = get_prompt(prompts[c])

            def labels_of(drawn, raw=raw, pairs=pairs, lspec=lspec, prompt=prompt):
                # a calibrated labeler's mapping refitted on the drawn queries; any other labeler's raw labels are
                # its labels (finish_labels returns them as they are)
                return finish_labels(raw, pairs, lspec, prompt, fit_queries=drawn)

            _, table = sp.coverage_draws(runs, qrels, labels_of, flags, p.measures, n=cov["n"], draws=cov["draws"],
                                         seed=p.seed, labeler=lab, alpha=p.alpha, n_boot=p.ci_n_boot,
                                         n_batches=p.batches, label_gain=p.label_gain)
            covs.append(table.assign(collection=c, n=cov["n"], N=N, draws=cov["draws"]))
        elif cov["draws"]:
            notes.append(f"{c}, {lab}: no coverage ({N} queries labelled; n = {cov['n']} needs at least "
                         f"{cov['n'] + 2})")
        progress.advance()
    progress.close()
    first = ["collection"]
    table = pd.concat(tables, ignore_index=True)
    table = table[first + [x for x in table.columns if x not in first]]
    table.to_csv(sm.output.csv, index=False)
    gap = pd.concat(gaps, ignore_index=True) if gaps else pd.DataFrame(columns=sp.GAP_COLUMNS + first)
    gap = gap[first + [x for x in gap.columns if x not in first]]
    gap.to_csv(sm.output.gap, index=False)
    rank = pd.concat(ranks, ignore_index=True)
    rank = rank[first + [x for x in rank.columns if x not in first]]
    rank.to_csv(sm.output.agreement, index=False)
    cover = pd.concat(covs, ignore_index=True) if covs else pd.DataFrame(columns=first + sp.COVERAGE_COLUMNS)
    cover = cover[first + [x for x in cover.columns if x not in first]]
    cover.to_csv(sm.output.coverage, index=False)
    m0 = p.measures[0]
    fig = self_preference_figure(table, m0, title=f"Self-preference: bias of {m0} by labels per system")
    save(fig, sm.output.pdf, sm.output.png)
    show = ["collection", "labeler", "system", "same_model", "measure", "by_labels", "by_humans", "bias", "bias_low",
            "bias_high", "rank_by_humans", "rank_by_labels"]
    with open(sm.output.md, "w") as f:
        f.write("# Self-preference of the labelers\n\nBias = a system's mean score by the labels − by the human "
                "qrels on the same topics, with its paired bootstrap percentile interval over topics "
                f"({p.n_boot} resamples, seed {p.seed}). Same-model systems use the labeler's own model.\n\n")
        f.write("## Same-model gap (mean bias of same-model systems − mean bias of the others)\n\n")
        f.write(to_markdown(gap) if len(gap) else "none: no labeler shares its model with a compared system\n")
        f.write("\n\n## System ranking by labels vs by humans\n\n" + to_markdown(rank))
        f.write("\n\n## Coverage of the CI paper's intervals per group\n\n")
        f.write(to_markdown(cover) if len(cover) else "not computed (labels.self_preference.coverage.draws)\n")
        for line in notes:
            f.write(f"\n- {line}")
        f.write("\n\n## Per system\n\n" + to_markdown(table[show]) + "\n")
    log.info("%d rows; gaps: %s", len(table), gap[["collection", "labeler", "measure", "gap", "gap_low", "gap_high"]]
             .to_string(index=False) if len(gap) else "none")
