"""Run by tests/test_arithmetic.py in a subprocess (the CPU kernels torch uses are chosen when it loads, from
``ATEN_CPU_CAPABILITY`` and ``ONEDNN_MAX_CPU_ISA``): SPLADE-tiny's weights of the fixed abstracts in float32 and in
its default float64, and the default SmolLM2 labeler's labels of a few pairs, saved to the ``.npz`` file named by the
first argument, with the CPU capability torch reports."""
import sys

import numpy as np

from test_labels_prefix import DOCS, QUERIES


def main(out: str) -> None:
    import torch

    from irrepro.labels.backends.smollm2 import smollm2_labeler
    from irrepro.retrieval.neural import SpladeTiny

    torch.set_num_threads(1)
    arrays = {"capability": np.array(torch.backends.cpu.get_cpu_capability())}
    for dtype in ("float32", "float64"):
        arrays[f"splade_{dtype}"] = SpladeTiny(threads=1, dtype=dtype).encode_docs(DOCS + QUERIES).toarray()
    lab = smollm2_labeler(batch_size=4, threads=1)
    arrays[f"smollm2_{lab.dtype_name}"] = np.asarray(lab.score("binary", QUERIES[:2], DOCS[1:3]), dtype=np.float64)
    np.savez(out, **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
