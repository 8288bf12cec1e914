# Comparing systems on every collection and import: paired tests, corrections, effect sizes, randomised Tukey HSD,
# G-study / D-study reliability, discriminative power, swap rates (irrepro.stats). docs/stats.md
from irrepro.stats.plan import settings as stats_settings


rule stats:
    """results/<version>/stats/<collection>/: per measure the per-pair table (<measure>.csv), a per-system summary
    (<measure>.md) and a p-value heat map (<measure>.pdf/.png); reliability, power and swap tables; the D-study."""
    input:
        f"{V}/scores/{{collection}}.tsv",
    output:
        report(
            directory(f"{V}/stats/{{collection}}"),
            patterns=["{name}.png", "{name}.md"],
            caption="../report/stats/figures.rst",
            category="Comparing systems",  # not "Statistics": the report has a panel of that name
            subcategory="{collection}",
        ),
    log:
        f"{V}/logs/stats/{{collection}}.log",
    benchmark:
        f"{V}/benchmarks/stats/{{collection}}.tsv"
    wildcard_constraints:
        collection=_alt(ALL_SCORED),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        settings=lambda wc: json.dumps(stats_settings(config, wc.collection), sort_keys=True),
    script:
        "../scripts/stats/collection.py"


rule stats_all:
    input:
        stats_targets(),
