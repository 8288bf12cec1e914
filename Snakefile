# irrepro: reproducible IR-evaluation experiments.
#
#   snakemake --cores all                                  # the default run (config/config.yaml)
#   snakemake --cores all --configfile config/test.yaml    # the tiny CI run (replaces the default config)
#   snakemake --cores 1 results/v1/bv/fig1_trec8-adhoc.pdf # rebuild one figure
#
# Everything that computes lives in src/irrepro; the rules in workflow/rules/*.smk only wire files together.
# Scheduling: the rules on the longest chain (index -> label pairs -> labels -> CI Figs 3 and 2) carry `priority:`,
# so that on few cores they start as soon as their inputs exist instead of after the many short jobs
# (docs/benchmark.md: the cold default run's timeline). Priority alone does not start a job of n threads: Snakemake
# starts it only when n cores are free at once, so the indexing, encoding and label jobs are one-core by default
# (retrieval.index_threads, population.neural.threads, labels.labelers.<name>.threads).
from snakemake.utils import min_version

min_version("9.0")


# A --configfile given on the command line *replaces* the default config rather than being merged into it, so
# that config/test.yaml can drop collections of the default run.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# `snakemake --report report.html`: every figure and table with its caption (workflow/report/).
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


wildcard_constraints:
    collection="[A-Za-z0-9][A-Za-z0-9._-]*",
    system="[A-Za-z0-9._+-]+",


include: "workflow/rules/fetch.smk"
include: "workflow/rules/retrieval.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/imports.smk"
include: "workflow/rules/stats.smk"
include: "workflow/rules/repro.smk"
include: "workflow/rules/provenance.smk"
include: "workflow/rules/querymodels.smk"


for _paper in PAPER_RULEFILES:

    include: _paper


include: "workflow/rules/verify.smk"
include: "workflow/rules/cost.smk"


# On a cluster (`--profile workflow/profiles/slurm`) these run in the Snakemake process on the submit host instead
# of as jobs: the fetches need the network that compute nodes often lack, and the gathers take a second, less than
# a job waits in a queue. A local run is unaffected. (tests/test_slurm.py checks that no other rule runs locally.)
localrules:
    fetch_artifact,
    fetch_collection,
    provenance,
    verify_summary,
    cost,


rule all:
    default_target: True
    input:
        before_cost(),
        rules.cost.output,
