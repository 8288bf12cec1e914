"""The label stage's plan (irrepro.labels.plan.resolve): a good config resolved, each bad one an InputError naming
its key."""
import copy
import json
from types import SimpleNamespace

import pytest

from irrepro.errors import InputError
from irrepro.labels.plan import resolve
from irrepro.labels.prompts import get_prompt

SPINE = SimpleNamespace(V="results/t", res="res", collections=["dl19-pool", "vaswani"],
                        systems={"dl19-pool": ["bm25_a", "dph"], "vaswani": ["bm25_a"]}, papers={})
CONFIG = {"labels": {
    "cache": None,
    "labelers": {
        "smollm2": {"backend": "smollm2", "batch_size": 8},
        "flant5": {"backend": "file", "artifact": "trec-dl-llm-labels/x.txt", "smoothing": 0.1},
        "mine": {"backend": "file", "path": "labels/mine.txt"},
    },
    "collections": {
        "vaswani": {"system": "bm25_a", "depth": 2, "judged_only": False, "prompt": "binary", "labelers": ["smollm2"]},
        "dl19-pool": {"system": "dph", "depth": 20, "judged_only": True, "prompt": "trecdl",
                      "labelers": ["flant5", "mine"]},
    }}}


def test_resolve_good_config():
    p = resolve(CONFIG, SPINE)
    assert p.collections == ["dl19-pool", "vaswani"]
    assert p.labelers == ["flant5", "mine", "smollm2"]
    assert p.cache == "res/labels/cache.sqlite"
    assert p.tables == {"dl19-pool": ["results/t/labels/dl19-pool/flant5.tsv", "results/t/labels/dl19-pool/mine.tsv"],
                        "vaswani": ["results/t/labels/vaswani/smollm2.tsv"]}
    assert p.files == {"smollm2": [], "flant5": ["res/artifacts/trec-dl-llm-labels/x.txt"],
                       "mine": ["labels/mine.txt"]}
    # the spec param is the labeler's config as canonical JSON (what the rules passed before the plan)
    assert p.specs["flant5"] == json.dumps(CONFIG["labels"]["labelers"]["flant5"], sort_keys=True)
    assert p.prompt_hashes == {"vaswani": get_prompt("binary").hash, "dl19-pool": get_prompt("trecdl").hash}
    cfg = copy.deepcopy(CONFIG)
    cfg["labels"]["cache"] = "/elsewhere/cache.sqlite"
    assert resolve(cfg, SPINE).cache == "/elsewhere/cache.sqlite"
    assert p.shard_size is None  # no shards: the single `labels` rule
    cfg["labels"]["shards"] = {"size": 7, "gpu": 1}
    q = resolve(cfg, SPINE)
    assert q.shard_size == 7 and q.shards["gpu"] == 1
    assert q.shard_cache("vaswani", "smollm2", 0, 3) == "/elsewhere/cache.shards/vaswani/smollm2/shard-0-of-3.sqlite"


def _bad(edit):
    cfg = copy.deepcopy(CONFIG)
    edit(cfg["labels"])
    with pytest.raises(InputError) as e:
        resolve(cfg, SPINE)
    return str(e.value)


def test_each_error_names_its_key():
    msg = _bad(lambda c: c["collections"].update(robust04=dict(c["collections"]["vaswani"])))
    assert msg.startswith("config key labels.collections:") and "'robust04'" in msg
    msg = _bad(lambda c: c["collections"]["vaswani"].update(system="qld"))
    assert msg.startswith("config key labels.collections.vaswani.system:") and "'qld'" in msg
    msg = _bad(lambda c: c["collections"]["vaswani"].update(labelers=["gpt"]))
    assert msg.startswith("config key labels.collections.vaswani.labelers:") and "'gpt'" in msg
    msg = _bad(lambda c: c["labelers"].update(bare={"backend": "file"}))
    assert msg.startswith("config key labels.labelers.bare:") and "artifact" in msg
    msg = _bad(lambda c: c["collections"]["vaswani"].update(prompt="nosuch"))
    assert msg.startswith("config key labels.collections.vaswani.prompt:") and "'nosuch'" in msg
