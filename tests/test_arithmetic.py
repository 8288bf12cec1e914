"""irrepro.core.arithmetic: which arithmetic a half-precision key names, from the CPU's flags and oneDNN's cap; the
default dtypes' numbers on two CPU kernel families."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irrepro.core import arithmetic as ar
from irrepro.models.optional import MissingPackageError
from irrepro.models.packaged import smollm2_gguf_path

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 fma
"""


def test_cpu_flags_are_read_from_cpuinfo():
    assert {"avx2", "avx512_bf16"} <= ar.cpu_flags(CPUINFO)
    assert ar.cpu_flags("processor : 0\n") == set()
    assert "bf16" in ar.cpu_flags("Features\t: fp asimd bf16\n")  # aarch64 Linux


@pytest.mark.parametrize("flags, env, native", [
    ({"avx2", "avx512f", "avx512_bf16"}, {}, True),
    ({"avx2", "amx_bf16"}, {}, True),
    ({"avx2", "avx512f"}, {}, False),  # AVX-512 without its BF16 extension: emulated
    ({"avx2"}, {}, False),
    ({"avx512_bf16"}, {"ONEDNN_MAX_CPU_ISA": "AVX2"}, False),  # capped below it
    ({"avx512_bf16"}, {"ONEDNN_MAX_CPU_ISA": "avx512_core"}, False),
    ({"avx512_bf16"}, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16"}, True),
    ({"avx512_bf16"}, {"ATEN_CPU_CAPABILITY": "avx2"}, True),  # oneDNN's matrix products stay native
])
def test_native_bfloat16_needs_the_flag_and_no_cap(flags, env, native):
    assert ar.cpu_native("bfloat16", flags, env) is native
    assert ar.arithmetic("cpu", "bfloat16", flags=flags, env=env) == ("cpu-native" if native else "cpu-emulated")


def test_float32_keys_hold_no_device_and_half_precision_keys_do():
    for device in ("cpu", "cuda:0", "mps"):
        assert ar.arithmetic(device, "float32") is None
        assert ar.arithmetic(device, "torch.float32") is None
    assert ar.arithmetic("mps", "bfloat16") == "mps"
    assert ar.arithmetic("cpu", "float16", flags={"avx512_bf16"}, env={}) == "cpu-emulated"
    assert ar.arithmetic("cpu", "float16", flags={"avx512_fp16"}, env={}) == "cpu-native"


def test_emulated_bfloat16_warns_once_with_a_measured_slowdown(monkeypatch, caplog):
    pytest.importorskip("torch")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)  # the machine's own cap would make every CPU emulate
    monkeypatch.setattr(ar, "cpu_flags", lambda cpuinfo=None: {"avx2"})
    monkeypatch.setattr(ar, "_WARNED", set())
    monkeypatch.setattr(ar, "matmul_ratio", lambda dtype, **kw: 36.0)
    caplog.set_level("WARNING", logger="irrepro")
    assert ar.warn_if_slow("cpu", "bfloat16", "labeler x") == 36.0
    assert ar.warn_if_slow("cpu", "bfloat16", "labeler x") is None  # once per process
    assert ar.warn_if_slow("cpu", "float32", "labeler x") is None
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 1 and "36x slower than float32" in msgs[0]
    monkeypatch.setattr(ar, "cpu_flags", lambda cpuinfo=None: {"avx512_bf16"})
    monkeypatch.setattr(ar, "_WARNED", set())
    assert ar.warn_if_slow("cpu", "bfloat16", "labeler x") is None  # native: nothing to say


def test_matmul_ratio_is_the_best_dtype_time_over_the_best_float32_time(monkeypatch):
    """On a clock where each bfloat16 product takes 6 ticks and each float32 one 2 (the first product of each, a
    warm-up, 50): 3.0 — the best of the repeats, not their mean nor the warm-up."""
    torch = pytest.importorskip("torch")
    clock = {"t": 0.0, "cost": 0.0}
    real_randn = torch.randn

    class Fake:
        def __init__(self, dtype):
            self.dtype, self.calls = dtype, 0

        def to(self, dtype):
            return Fake(dtype)

        def __matmul__(self, other):
            self.calls += 1
            clock["t"] += 50.0 if self.calls == 1 else (6.0 if self.dtype == torch.bfloat16 else 2.0)
            return self

    monkeypatch.setattr(torch, "randn", lambda *a, **k: Fake(torch.float32))
    monkeypatch.setattr(ar.time, "perf_counter", lambda: clock["t"])
    try:
        assert ar.matmul_ratio("bfloat16", n=8, repeats=3) == 3.0
        assert ar.matmul_ratio("float32", n=8, repeats=3) == 1.0
    finally:
        monkeypatch.setattr(torch, "randn", real_randn)


def largest_difference(a, b) -> float:
    """The largest absolute difference of two arrays of one shape (a shape mismatch is a difference: inf)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")


def test_largest_difference_reads_what_it_is_given():
    assert largest_difference([1.0, 2.0], [1.0, 2.5]) == 0.5
    assert largest_difference([1.0], [1.0, 2.0]) == float("inf")
    assert largest_difference(np.zeros((2, 2)), np.zeros((2, 2))) == 0.0


@pytest.mark.slow
def test_default_dtypes_give_the_same_numbers_on_avx512_and_avx2_kernels(tmp_path):
    """The default SPLADE-tiny encodings (float64) and SmolLM2 labels (float64) computed with torch's own kernels and
    with its AVX2 kernels (an AVX2-only CPU imitated, as docs/benchmark.md measures it) agree to 1e-6; float32
    SPLADE-tiny, the arithmetic float64 replaced, does not (a check that passes whatever it is fed would pass it)."""
    for module in ("torch", "transformers", "gguf", "cognition"):
        pytest.importorskip(module)
    try:
        smollm2_gguf_path()
    except MissingPackageError as e:
        pytest.skip(str(e))
    got = {}
    for kernels, env in (("own", {}), ("avx2", {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"})):
        base = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")}
        subprocess.run([sys.executable, str(Path(__file__).with_name("kernel_probe.py")), str(tmp_path / kernels)],
                       check=True, env={**base, **env}, cwd=tmp_path)
        got[kernels] = dict(np.load(tmp_path / f"{kernels}.npz"))
    assert str(got["avx2"]["capability"]) == "AVX2"
    assert largest_difference(got["own"]["splade_float64"], got["avx2"]["splade_float64"]) <= 1e-6
    assert largest_difference(got["own"]["smollm2_float64"], got["avx2"]["smollm2_float64"]) <= 1e-6
    if str(got["own"]["capability"]) != "AVX2":  # two kernels compared: float32 shows what float64 removes
        assert largest_difference(got["own"]["splade_float32"], got["avx2"]["splade_float32"]) > 1e-6
