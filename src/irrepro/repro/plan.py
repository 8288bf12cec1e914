"""The repro stage's plan (config section ``repro``): which collections, which Lucene and PISA runs, which comparisons,
and the key of every Lucene index (:func:`lucene_index_key`). Errors name the dotted config key."""
from __future__ import annotations

from dataclasses import dataclass, field

from irrepro.errors import InputError
from irrepro.plan import documents_identity, settings_key
from irrepro.repro.table import Comparison
from irrepro.retrieval import lucene
from irrepro.retrieval.pisa import System


@dataclass
class ReproPlan:
    collections: list
    comparisons: list  # Comparison, the same for every collection
    lucene_systems: list  # Lucene run names
    pisa_systems: list  # PISA run names the comparisons read
    index_keys: dict = field(default_factory=dict)  # (collection, analyzer) -> lucene_index_key

    def index(self, res: str, collection: str, analyzer: str) -> str:
        """``<resources_dir>/indexes/<collection>-<key>.lucene``: keyed by what it is built from."""
        return f"{res}/indexes/{collection}-{self.index_keys[(collection, analyzer)]}.lucene"


def lucene_index_key(config: dict, collection: str, analyzer: str) -> str:
    """The first 16 hex digits of the sha256 of what a collection's Lucene index is built from, as canonical JSON: the
    engine and its jar's version, the ir_datasets id, the documents' artifact and its declared md5, and the analyzer's
    settings (stemmer, stopword list and the sha256 of its words)."""
    return settings_key({"engine": "lucene", "pyserini": lucene.PYSERINI_VERSION,
                         **documents_identity(config, collection),
                         "analyzer": lucene.get_analyzer(analyzer).settings()})


def _bm25(p: dict) -> System:
    return System("bm25", (("k1", p["k1"]), ("b", p["b"])))


def resolve(config: dict, plan) -> ReproPlan:
    rc = config["repro"]
    colls = list(plan.collections) if rc.get("collections") is None else list(rc["collections"])
    for c in colls:
        if c not in plan.collections:
            raise InputError(f"config key repro.collections: {c!r} is not a retrieved collection (collections: "
                             f"{plan.collections})")
    if rc["depth"] > config["retrieval"]["depth"]:
        raise InputError(f"config key repro.depth: {rc['depth']} ranks, but retrieval.depth retrieves "
                         f"{config['retrieval']['depth']}")
    base, adv = _bm25(rc["baseline"]), _bm25(rc["advanced"])
    if base == adv:
        raise InputError("config keys repro.baseline and repro.advanced: the same BM25 parameters (ER and ΔRI need two "
                         "settings)")
    comps, lsys = [], []
    for a in rc["analyzers"]:
        lb, la = lucene.LuceneSystem(a, base).name, lucene.LuceneSystem(a, adv).name
        lsys += [lb, la]
        comps.append(Comparison(f"lucene-{a} vs pisa", (lb, la), (base.name, adv.name)))
    keys = {(c, a): lucene_index_key(config, c, a) for c in colls for a in rc["analyzers"]}
    return ReproPlan(colls, comps, lsys, [base.name, adv.name], keys)
