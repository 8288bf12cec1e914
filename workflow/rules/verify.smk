# Verify: per paper, the paper's numbers (workflow/resources/reference/<paper>.yaml) beside ours (the values files
# its rules wrote, registered in VERIFY_VALUES by the paper's rule file), and one summary of every paper.



def verify_evidence(paper):
    """What a paper's evidence functions (irrepro.papers.<paper>.evidence) read: ``(files, settings)``. bv: the
    score tables of Table 9's collections and Table 8's, with the measures, the bv.table9 settings and bv.seed
    (the seed of its resampling evidence); sampling: the half-width readings of Table 4. Other papers: none."""
    if paper == "sampling":
        return [f"{V}/sampling/ci_halfwidth_readings.csv"], {}
    if paper != "bv":
        return [], {}
    t8 = [BV_PLAN.table8, config["bv"]["table8"]["measure"]] if BV_PLAN.table8 else None
    colls = sorted(set(BV_PLAN.table9) | ({BV_PLAN.table8} if BV_PLAN.table8 else set()))
    settings = {
        "table9": dict(BV_PLAN.table9),
        "table9_settings": {k: v for k, v in config["bv"]["table9"].items() if k != "collections"},
        "table8": t8,
        "seed": config["bv"]["seed"],
    }
    return [f"{V}/scores/{c}.tsv" for c in colls], settings


rule verify:
    """<paper>/verify.csv: one row per reference row (item, kind, data, paper's value, ours, difference, tolerance,
    basis, ok, verdict, evidence_low, evidence_high, evidence, note), then any computed item without a paper value;
    verify.md with the scorecard line on top; verify.png: every numeric check row against its tolerance. Explained
    rows get their evidence from input.evidence (the score tables the paper's evidence functions read)."""
    input:
        values=lambda wc: VERIFY_VALUES[wc.paper],
        reference=f"{REFERENCE}/{{paper}}.yaml",
        evidence=lambda wc: verify_evidence(wc.paper)[0],
    output:
        csv=f"{V}/{{paper}}/verify.csv",
        md=report(
            f"{V}/{{paper}}/verify.md",
            caption="../report/verify_paper.rst",
            category="Verify",
            labels={"paper": "{paper}"},
        ),
        png=report(
            f"{V}/{{paper}}/verify.png",
            caption="../report/verify_figure.rst",
            category="Verify",
            labels={"paper": "{paper}", "figure": "checks"},
        ),
        pdf=f"{V}/{{paper}}/verify.pdf",
    log:
        f"{V}/logs/{{paper}}/verify.log",
    benchmark:
        f"{V}/benchmarks/verify/{{paper}}.tsv"
    wildcard_constraints:
        paper=_alt(verify_papers()),
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        paper=lambda wc: wc.paper,
        context=lambda wc: json.dumps(VERIFY_CONTEXT.get(wc.paper, {}), sort_keys=True),
        evidence=lambda wc: json.dumps(verify_evidence(wc.paper)[1], sort_keys=True),
    script:
        "../scripts/verify.py"


rule verify_summary:
    """results/<version>/verify.md: what each verdict means, per paper the scorecard over check rows (reproduced /
    explained / unexplained / not reproducible; cross-checks and claims apart), and every row that is not
    reproduced, a cross-check that disagrees or a claim that fails."""
    input:
        verify_tables(),
    output:
        md=report(f"{V}/verify.md", caption="../report/verify.rst", category="Verify"),
        csv=f"{V}/verify_summary.csv",
    log:
        f"{V}/logs/verify_summary.log",
    benchmark:
        f"{V}/benchmarks/verify_summary.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    script:
        "../scripts/verify_summary.py"
