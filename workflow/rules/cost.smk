# cost.csv: what the run cost, per rule, from every rule's `benchmark:` file (irrepro.core.cost).


rule cost:
    """results/<version>/cost.{csv,md,pdf,png}: wall time, CPU time, peak memory and share of the run per rule.
    It runs after everything else the default target builds, so it sees every job's benchmark file."""
    input:
        before_cost(),
    output:
        csv=f"{V}/cost.csv",
        md=report(f"{V}/cost.md", caption="../report/cost.rst", category="Cost"),
        pdf=f"{V}/cost.pdf",
        png=report(f"{V}/cost.png", caption="../report/cost.rst", category="Cost"),
    log:
        f"{V}/logs/cost.log",
    benchmark:
        f"{V}/benchmarks/cost.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        roots=[f"{V}/benchmarks", f"{RES}/benchmarks"],
    script:
        "../scripts/cost.py"
