"""BV-Test Sec. 3.4 on one collection: k simulated collections per topic from the population's run files (with
scores), then Eq. 12 per (system, topic). Output: the per-topic long table of irrepro.papers.bv.simulation.per_topic_table."""
import time
import zlib
from pathlib import Path

import numpy as np

from irrepro.errors import InputError
from irrepro.core.logs import log_to
from irrepro.papers.bv.simulation import per_topic_table, read_scored_run, relevance_profile
from irrepro.core.trec import read_qrels

sm = snakemake  # noqa: F821


def run_name(path):
    """System name of a run file: the file name without .gz, a leading NIST 'input.' and a trailing .run."""
    n = Path(path).name
    n = n[:-3] if n.endswith(".gz") else n
    n = n[6:] if n.startswith("input.") else n
    return n[:-4] if n.endswith(".run") else n


c = sm.wildcards.collection
with log_to(sm.log[0]) as log:
    t0 = time.perf_counter()
    runs = {}
    for p in sm.input.runs:
        name = run_name(p)
        if name in runs:
            raise InputError(f"two run files give the system name {name!r}", path=p)
        runs[name] = read_scored_run(p, name)
    qrels = read_qrels(sm.input.qrels)
    t1 = time.perf_counter()
    prof = relevance_profile(runs, qrels, rel_threshold=sm.params.rel_threshold, depth=sm.params.depth)
    t2 = time.perf_counter()
    # one stream per collection: the seed from config and the collection's name
    rng = np.random.default_rng([sm.params.seed, zlib.crc32(c.encode())])
    c0 = time.process_time()
    df = per_topic_table(prof, sm.params.k, rng, sm.params.unretrieved, bool(sm.params.shared))
    t3, c1 = time.perf_counter(), time.process_time()
    log.info("%s: %d systems x %d topics (%d useful), %d relevant retrieved in all, k=%d, unretrieved=%s, "
             "shared=%s", c, len(prof.systems), len(prof.topics), int(prof.useful.sum()), int(prof.r.sum()),
             sm.params.k, sm.params.unretrieved, sm.params.shared)
    log.info("timing: read %.2f s, profile %.2f s, simulate + Eq. 12 %.2f s wall (%.2f s CPU)",
             t1 - t0, t2 - t1, t3 - t2, c1 - c0)
    if not prof.useful.all():
        log.warning("topics without any relevant retrieved document (left out of Tables 10-11): %s",
                    [t for t, u in zip(prof.topics, prof.useful) if not u])
    df.to_csv(sm.output[0], sep="\t", index=False, float_format="%.8g")
