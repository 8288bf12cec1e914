"""No two jobs build the same ir_datasets store at once: two processes on a cold IR_DATASETS_HOME, started
together, both read vaswani (topics, qrels, the docstore) and the store they leave is intact."""
import json
import subprocess
import sys
import time
from pathlib import Path


from irrepro.datasets.collections import store_lock

REPO = Path(__file__).resolve().parents[1]

READER = """
import json, os, sys, time
sys.path.insert(0, {src!r})
from irrepro.datasets.mirror import ensure_ir_datasets_home
ensure_ir_datasets_home({home!r}, {mirror!r})
from irrepro.datasets import collections as coll
ds = coll.load("vaswani")
with coll.store_lock("vaswani"):
    t0 = time.time()
    topics, qrels = coll.topics(ds, "vaswani"), coll.qrels(ds, "vaswani")
    t1 = time.time()
doc_text = coll.DocText("vaswani")
ids = [d.doc_id for d in ds.docs_iter()]
texts = doc_text(ids)
doc_text.close()
json.dump({{"topics": len(topics), "qrels": len(qrels), "docs": len(ids), "texts": len(texts),
           "first": texts[ids[0]], "last": texts[ids[-1]], "held": [t0, t1]}}, sys.stdout)
"""


def test_two_readers_on_a_cold_cache_both_succeed_and_the_store_is_intact(tmp_path, mirror):
    home = tmp_path / "irds"
    code = READER.format(src=str(REPO / "src"), home=str(home), mirror=str(mirror))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    a, b = (json.loads(o[0]) for o in outs)
    assert a["docs"] == b["docs"] == a["texts"] == b["texts"] > 10000  # vaswani: 11429 documents
    assert (a["topics"], a["qrels"], a["first"], a["last"]) == (b["topics"], b["qrels"], b["first"], b["last"])
    (s1, e1), (s2, e2) = sorted([a["held"], b["held"]])
    assert e1 <= s2  # the store lock was held by one at a time
    assert (home / ".locks" / "vaswani.lock").exists()


def test_store_lock_excludes_a_second_holder(tmp_path):
    code = (f"import sys, time; sys.path.insert(0, {str(REPO / 'src')!r})\n"
            "from irrepro.datasets.collections import store_lock\n"
            f"with store_lock('vaswani/trec', {str(tmp_path)!r}):\n"
            "    print('held', flush=True); time.sleep(2)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    t = time.time()
    with store_lock("vaswani", tmp_path):  # same top-level id: waits for the other holder
        waited = time.time() - t
    p.wait()
    assert waited > 1.0
    t = time.time()
    with store_lock("cranfield", tmp_path):
        pass
    assert time.time() - t < 1.0
