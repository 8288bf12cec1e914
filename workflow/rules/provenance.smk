# provenance.json: code version, config, package versions, md5 of every input file, seeds.


rule provenance:
    input:
        scores=[f"{V}/scores/{c}.tsv" for c in ALL_SCORED],
        qrels=[f"{V}/collections/{c}/qrels.txt" for c in COLLECTIONS],
        artifacts=[f for name in IMPORTS for f in import_inputs(name)],
    output:
        f"{V}/provenance.json",
    log:
        f"{V}/logs/provenance.log",
    benchmark:
        f"{V}/benchmarks/provenance.tsv"
    conda:
        "../envs/irrepro.yaml"
    threads: 1
    params:
        config=json.dumps(config, sort_keys=True, default=str),
        home=f"{RES}/ir_datasets",
    script:
        "../scripts/provenance.py"


# Every run that builds something, a targeted one (`snakemake <file>`) too, leaves a record of what it built and
# how: results/<version>/provenance/<UTC time>-<pid>.json (irrepro.core.provenance.record_run).
onsuccess:
    if workflow.is_main_process:
        record_run(V, RUN_STARTED, config)
