# Comparing systems on every collection and import: paired tests, corrections, effect sizes, randomised Tukey HSD,
# G-study / D-study reliability, discriminative power, swap rates (irrepro.stats). docs/stats.md
from irrepro.stats.plan import COMPARE_KEYS, RELIABILITY_KEYS, settings as _stats_settings


rule stats_compare:
    """Every pair of systems of one collection × measure under every test and correction (<measure>.csv), a
    per-system summary (<measure>.md) and the p-value heat map (<measure>.pdf/.png)."""
    input:
        f"{V}/scores/{{collection}}.tsv",
    output:
        csv=f"{V}/stats/{{collection}}/{{measure}}.csv",
        md=report(
            f"{V}/stats/{{collection}}/{{measure}}.md",
            caption="../report/stats/compare.rst",
            category="Comparing systems",  # not "Statistics": the report has a panel of that name
            subcategory="{collection}",
            labels={"collection": "{collection}", "measure": "{measure}", "item": "summary"},
        ),
        pdf=f"{V}/stats/{{collection}}/{{measure}}.pdf",
        png=report(
            f"{V}/stats/{{collection}}/{{measure}}.png",
            caption="../report/stats/compare.rst",
            category="Comparing systems",
            subcategory="{collection}",
            labels={"collection": "{collection}", "measure": "{measure}", "item": "p-values"},
        ),
    log:
        f"{V}/logs/stats_compare/{{collection}}/{{measure}}.log",
    benchmark:
        f"{V}/benchmarks/stats_compare/{{collection}}/{{measure}}.tsv"
    wildcard_constraints:
        collection=_alt(ALL_SCORED),
        measure=_alt(sorted({m for ms in STATS_MEASURES.values() for m in ms})),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        settings=lambda wc: json.dumps(_stats_settings(config, wc.collection, COMPARE_KEYS), sort_keys=True),
    script:
        "../scripts/stats/compare.py"


rule stats_reliability:
    """G-study per measure (reliability.csv) with the D-study figure, discriminative power of every test
    (power.csv) and swap rates over topic subsets (swaps.csv) of one collection."""
    input:
        scores=f"{V}/scores/{{collection}}.tsv",
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
