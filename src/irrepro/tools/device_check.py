"""The computed labeler and the neural encoders on several devices: their speed, and how far their numbers differ.

    python -m irrepro.tools.device_check labels pairs.tsv out.json      # MiniLM mean+maxsim labels per device/dtype
    python -m irrepro.tools.device_check encode docs.tsv out.json       # MiniLM and SPLADE-tiny encodings per device
    python -m irrepro.tools.device_check compare DIR out.json --pairs pairs.tsv --docs docs.tsv
                                                         # this machine against another's arrays (in DIR)

``pairs.tsv``: columns ``collection``, ``query``, ``text``; ``docs.tsv``: a column ``text``. Every configuration is
run on the same inputs in one process and compared with the host CPU's float32 result (the default arithmetic);
``out.json`` holds pairs or documents per second, the largest difference from the CPU's result and each labeler's
cache settings; ``out.npz`` beside it the float32 arrays of the GPU's default configuration (labels; the first
2,000 dense and 1,000 sparse encodings), which ``compare`` checks on another machine. ``--minilm FOLDER``: an
unpacked all-MiniLM-L6-v2 folder (``all-MiniLM-L6-v2-<md5>``) for a machine without the package (e.g. a GPU node);
``--splade FOLDER`` likewise. docs/scale.md ("On a GPU") reports a run of it."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _timed(torch, f):
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    sync()
    t = time.perf_counter()
    out = f()
    sync()
    return out, time.perf_counter() - t


def _use_minilm(folder):
    """Load all-MiniLM-L6-v2 from an unpacked folder instead of the package (whose checks need its wheel)."""
    import irrepro.labels.backends.biencoder as E
    import irrepro.retrieval.neural.encoders as N

    folder = Path(folder)
    E.packaged_minilm = N.packaged_minilm = lambda cache_dir=None: folder
    N.minilm_zip_path = lambda: folder / "model.zip"
    N.verify_files = lambda *a, **k: {}
    N.dist_version = lambda *a: "unpacked"


def labels(pairs: pd.DataFrame, configs, torch) -> tuple[dict, dict]:
    """MiniLM ``mean+maxsim`` similarities of every pair under each ``(device, batch_size, dtype)``; a
    collection's pairs in one call, in label_pairs' order (shortest documents first, a document's pairs together)."""
    from irrepro.labels.backends.biencoder import BiEncoderLabeler

    res, arrays = {}, {}
    for dev, bs, dt in configs:
        lab = BiEncoderLabeler("minilm", device=dev, batch_size=bs, dtype=dt, similarity="mean+maxsim")
        lab.similarities(["warm-up"], [pairs["text"].iloc[0]])
        out, seconds = np.zeros(len(pairs)), 0.0
        for _, g in pairs.groupby("collection", sort=True):
            g = g.iloc[sorted(range(len(g)), key=lambda i: lab.order_key(g["query"].iloc[i], g["text"].iloc[i]))]
            s, t = _timed(torch, lambda: lab.similarities(g["query"].tolist(), g["text"].tolist()))
            out[g.index.to_numpy()] = s
            seconds += t
        key = f"{dev}/{lab.batch_size}/{dt}"
        res[key] = {"pairs_per_s": len(pairs) / seconds, "name": lab.name, "settings": lab.settings()}
        arrays[key] = out
    return res, arrays


def encodings(texts, configs, torch, splade_folder=None) -> tuple[dict, dict]:
    """The dense (MiniLM) and sparse (SPLADE-tiny) document encodings under each ``(device, batch_size)``."""
    from irrepro.retrieval import neural

    res, arrays = {}, {}
    for model in ("minilm-l6-v2", "splade-tiny"):
        for dev, bs in configs:
            kw = {"folder": splade_folder} if model == "splade-tiny" and splade_folder else {}
            m = neural.load_model(model, batch_size=bs, device=dev, **kw)
            m.encode_docs(texts[:64])
            x, t = _timed(torch, lambda: m.encode_docs(texts))
            res[f"{model}/{dev}/{bs}"] = {"docs_per_s": len(texts) / t, "settings": m.settings}
            arrays[f"{model}/{dev}/{bs}"] = x
    return res, arrays


def _diff(a, b) -> dict:
    d = abs(a - b)
    out = {"max_abs_diff": float(d.max())}
    if hasattr(a, "nnz"):  # sparse: weights zero on one side only
        out["support_differs"] = int(((a != 0) != (b != 0)).sum())
    return out


def main(argv=None) -> int:
    import scipy.sparse as sp
    import torch

    ap = argparse.ArgumentParser(prog="python -m irrepro.tools.device_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["labels", "encode", "compare"])
    ap.add_argument("inputs")
    ap.add_argument("out")
    ap.add_argument("--minilm", help="an unpacked all-MiniLM-L6-v2-<md5> folder")
    ap.add_argument("--splade", help="a copy of SPLADE-tiny's model folder")
    ap.add_argument("--pairs", help="compare: the pairs.tsv the other machine labelled")
    ap.add_argument("--docs", help="compare: the docs.tsv the other machine encoded")
    a = ap.parse_args(argv)
    if a.minilm:
        _use_minilm(a.minilm)
    gpu = "cuda" if torch.cuda.is_available() else None
    info = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "cpu_threads": torch.get_num_threads(), "gpu": torch.cuda.get_device_name(0) if gpu else None}
    if a.what == "compare":  # this machine's CPU, float32, against the other machine's default arrays
        other = {**np.load(next(Path(a.inputs).glob("*.labels.npz"))),
                 **np.load(next(Path(a.inputs).glob("*.encodings.npz")))}
        pairs = pd.read_csv(a.pairs, sep="\t", dtype=str, keep_default_na=False)
        res, arr = labels(pairs, [("cpu", None, "float32")], torch)
        info["labels"] = {**res, "vs_other": _diff(arr["cpu/32/float32"], other["labels"])}
        texts = pd.read_csv(a.docs, sep="\t", dtype=str, keep_default_na=False).text.tolist()
        res, arr = encodings(texts[:2000], [("cpu", 32)], torch, a.splade)
        info["dense_vs_other"] = _diff(arr["minilm-l6-v2/cpu/32"], other["dense"])
        sparse = sp.csr_matrix((other["sparse_data"], other["sparse_indices"], other["sparse_indptr"]),
                               shape=tuple(other["sparse_shape"]))
        info["sparse_vs_other"] = _diff(arr["splade-tiny/cpu/32"][:sparse.shape[0]], sparse)
    elif a.what == "labels":
        pairs = pd.read_csv(a.inputs, sep="\t", dtype=str, keep_default_na=False)
        configs = [("cpu", None, "float32"), ("cpu", None, "bfloat16")]
        if gpu:
            configs = [(gpu, None, "float32"), (gpu, 32, "float32"), (gpu, None, "bfloat16"), *configs]
        res, arr = labels(pairs, configs, torch)
        ref = arr["cpu/32/float32"]
        info["labels"] = {k: {**v, "vs_cpu_float32": _diff(arr[k], ref)} for k, v in res.items()}
        np.savez(Path(a.out).with_suffix(".labels.npz"), labels=arr[next(iter(arr))])
    else:
        texts = pd.read_csv(a.inputs, sep="\t", dtype=str, keep_default_na=False).text.tolist()
        configs = ([(gpu, 256), (gpu, 32)] if gpu else []) + [("cpu", 32)]
        res, arr = encodings(texts, configs, torch, a.splade)
        for k, v in res.items():
            v["vs_cpu"] = _diff(arr[k], arr[k.rsplit("/", 2)[0] + "/cpu/32"])
        info["encodings"] = res
        first = configs[0]
        dense, sparse = arr[f"minilm-l6-v2/{first[0]}/{first[1]}"], arr[f"splade-tiny/{first[0]}/{first[1]}"][:1000]
        np.savez(Path(a.out).with_suffix(".encodings.npz"), dense=dense[:2000], sparse_data=sparse.data,
                 sparse_indices=sparse.indices, sparse_indptr=sparse.indptr, sparse_shape=np.array(sparse.shape))
    Path(a.out).write_text(json.dumps(info, indent=1, default=str))
    print(json.dumps(info, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
