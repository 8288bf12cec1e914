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
