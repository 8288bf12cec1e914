# The LLM-label stage (Oosterhuis et al., KDD 2024, Sec. 7): the pairs of a ranking labelled by each configured
# labeler ("scoring mode": a distribution over grades), through a persistent cache. Usable on its own:
#   snakemake --cores 2 labels_all

LC = config["labels"]


def prompt_hash(prompt_id):
    """The content hash of a prompt (a param: editing a prompt relabels)."""
    try:
        from irrepro.labels.prompts import get_prompt
    except ImportError:  # the label library is being written
        return prompt_id
    return get_prompt(prompt_id).hash
LABEL_CACHE = LC["cache"] or f"{RES}/labels/cache.sqlite"
LABEL_COLLECTIONS = sorted(LC["collections"])

for _c, _spec in LC["collections"].items():
    if _c not in COLLECTIONS:
        raise ValueError(f"config key labels.collections: {_c!r} is not a retrieved collection (collections: {COLLECTIONS})")
    if _spec["system"] not in SYSTEMS[_c]:
        raise ValueError(f"config key labels.collections.{_c}.system: {_spec['system']!r} is not in the population "
                         f"(e.g. {SYSTEMS[_c][:3]})")
    for _l in _spec["labelers"]:
        if _l not in LC["labelers"]:
            raise ValueError(f"config key labels.collections.{_c}.labelers: {_l!r} is not defined under labels.labelers")
for _l, _spec in LC["labelers"].items():
    if _spec["backend"] == "file" and not (_spec.get("artifact") or _spec.get("path")):
        raise ValueError(f"config key labels.labelers.{_l}: backend file needs `artifact` or `path`")


def labeler_spec(name):
    """A labeler's config as canonical JSON (a param: changing the model, smoothing, ... relabels)."""
    return json.dumps(LC["labelers"][name], sort_keys=True)


def labeler_files(name):
    s = LC["labelers"][name]
    if s["backend"] != "file":
        return []
    return [artifact(s["artifact"]) if s.get("artifact") else s["path"]]


def labels_of(collection):
    return [f"{V}/labels/{collection}/{l}.tsv" for l in LC["collections"][collection]["labelers"]]


rule labels_pairs:
    """The (query, document) pairs to label: the top `depth` of a system's run on each judged query, with the
    human grades (optionally within each query's judged documents)."""
    input:
        run=lambda wc: f"{V}/runs/{wc.collection}/{LC['collections'][wc.collection]['system']}.run",
        qrels=f"{V}/collections/{{collection}}/qrels.txt",
    output:
        f"{V}/labels/{{collection}}/pairs.tsv",
    wildcard_constraints:
        collection=_alt(LABEL_COLLECTIONS),
    params:
        depth=lambda wc: LC["collections"][wc.collection]["depth"],
        judged_only=lambda wc: LC["collections"][wc.collection]["judged_only"],
    log:
        f"{V}/logs/labels/pairs_{{collection}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/labels/pairs.py"


rule labels:
    """Label distributions of every pair by one labeler (cached per labeler x prompt hash x pair; an interrupted
    job resumes where it stopped)."""
    input:
        pairs=f"{V}/labels/{{collection}}/pairs.tsv",
        topics=f"{V}/collections/{{collection}}/topics.tsv",
        docs=lambda wc: docs_inputs(wc.collection),
        files=lambda wc: labeler_files(wc.labeler),
    output:
        f"{V}/labels/{{collection}}/{{labeler}}.tsv",
    wildcard_constraints:
        collection=_alt(LABEL_COLLECTIONS),
        labeler=_alt(sorted(LC["labelers"])),
    params:
        spec=lambda wc: labeler_spec(wc.labeler),
        prompt=lambda wc: LC["collections"][wc.collection]["prompt"],
        prompt_hash=lambda wc: prompt_hash(LC["collections"][wc.collection]["prompt"]),
        dataset=lambda wc: config["collections"][wc.collection]["ir_datasets"],
        home=f"{RES}/ir_datasets",
        cache=LABEL_CACHE,
    log:
        f"{V}/logs/labels/{{collection}}/{{labeler}}.log",
    threads: 2
    resources:
        mem_mb=6000,
        runtime=600,
    script:
        "../scripts/labels/label.py"


rule labels_all:
    input:
        [labels_of(c) for c in LABEL_COLLECTIONS],
