# Comparing systems on every collection and import: paired tests, corrections, effect sizes, randomised Tukey HSD,
# G-study / D-study reliability, discriminative power, swap rates (irrepro.stats). docs/stats.md
from irrepro.plan import rule_names as _rule_names
from irrepro.stats.plan import (
    COMPARE_KEYS,
    RELIABILITY_KEYS,
    baseline_sources as _baseline_sources,
    settings as _stats_settings,
)

# One job per collection: every measure's per-pair table, summary and heat map (one Python start-up and one read of
# the score table for all of them; the results do not depend on it, each measure's resamples have their own seed).
# A rule per collection (its outputs are that collection's measures), all named stats_compare_<collection>.
_STATS_COMPARE_RULES = _rule_names(STATS_MEASURES, "stats_compare")
for collection, _measures in STATS_MEASURES.items():
    if not _measures:
        continue

    rule:
        name:
            _STATS_COMPARE_RULES[collection]
        input:
            scores=f"{V}/scores/{collection}.tsv",
            # the score tables of baselines from other collections and imports (stats.baseline: <id>/<system>)
            baselines=[f"{V}/scores/{o}.tsv" for o in _baseline_sources(config, PLAN, collection)],
        output:
            csv=[f"{V}/stats/{collection}/{measure}.csv" for measure in _measures],
            md=[
                report(
                    f"{V}/stats/{collection}/{measure}.md",
                    caption="../report/stats/compare.rst",
                    category="Comparing systems",  # not "Statistics": the report has a panel of that name
                    subcategory=collection,
                    labels={"collection": collection, "measure": measure, "item": "summary"},
                )
                for measure in _measures
            ],
            pdf=[f"{V}/stats/{collection}/{measure}.pdf" for measure in _measures],
            png=[
                report(
                    f"{V}/stats/{collection}/{measure}.png",
                    caption="../report/stats/compare.rst",
                    category="Comparing systems",
                    subcategory=collection,
                    labels={"collection": collection, "measure": measure, "item": "differences"},
                )
                for measure in _measures
            ],
            # every measure in one table (pt.Experiment's layout): CSV, Markdown and a booktabs LaTeX table
            summary_csv=f"{V}/stats/{collection}/summary.csv",
            summary_md=report(
                f"{V}/stats/{collection}/summary.md",
                caption="../report/stats/compare.rst",
                category="Comparing systems",
                subcategory=collection,
                labels={"collection": collection, "measure": "all", "item": "summary"},
            ),
            summary_tex=f"{V}/stats/{collection}/summary.tex",
        log:
            f"{V}/logs/stats_compare/{collection}.log",
        benchmark:
            f"{V}/benchmarks/stats_compare/{collection}.tsv"
        conda:
            "../envs/irrepro.yaml"
        threads: 1
        resources:
            mem_mb=3000,
            runtime=30,
        params:
            collection=collection,
            measures=_measures,
            settings=json.dumps(_stats_settings(config, collection, COMPARE_KEYS), sort_keys=True),
        script:
            "../scripts/stats/compare.py"


rule stats_reliability:
    """G-study per measure (reliability.csv) with the D-study figure, discriminative power of every test
    (power.csv) and swap rates over topic subsets (swaps.csv) of one collection."""
    input:
        scores=f"{V}/scores/{{collection}}.tsv",
        baselines=lambda wc: [f"{V}/scores/{o}.tsv" for o in _baseline_sources(config, PLAN, wc.collection)],
        tables=lambda wc: [f"{V}/stats/{wc.collection}/{m}.csv" for m in STATS_MEASURES[wc.collection]],
    output:
        csv=f"{V}/stats/{{collection}}/reliability.csv",
        md=report(
            f"{V}/stats/{{collection}}/reliability.md",
            caption="../report/stats/reliability.rst",
            category="Comparing systems",
            subcategory="{collection}",
            labels={"collection": "{collection}", "item": "reliability"},
        ),
        power_csv=f"{V}/stats/{{collection}}/power.csv",
        power_md=report(
            f"{V}/stats/{{collection}}/power.md",
            caption="../report/stats/reliability.rst",
            category="Comparing systems",
            subcategory="{collection}",
            labels={"collection": "{collection}", "item": "discriminative power"},
        ),
        swaps_csv=f"{V}/stats/{{collection}}/swaps.csv",
        swaps_md=report(
            f"{V}/stats/{{collection}}/swaps.md",
            caption="../report/stats/reliability.rst",
            category="Comparing systems",
            subcategory="{collection}",
            labels={"collection": "{collection}", "item": "swap rates"},
        ),
        pdf=f"{V}/stats/{{collection}}/dstudy.pdf",
        png=report(
            f"{V}/stats/{{collection}}/dstudy.png",
            caption="../report/stats/reliability.rst",
            category="Comparing systems",
            subcategory="{collection}",
            labels={"collection": "{collection}", "item": "D-study"},
        ),
    log:
        f"{V}/logs/stats_reliability/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/stats_reliability/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(ALL_SCORED),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        settings=lambda wc: json.dumps(_stats_settings(config, wc.collection, RELIABILITY_KEYS), sort_keys=True),
        measures=lambda wc: STATS_MEASURES[wc.collection],
    script:
        "../scripts/stats/reliability.py"


rule stats_all:
    input:
        stats_targets(),
