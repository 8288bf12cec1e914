"""The arithmetic a torch model computes in, as part of what its outputs are keyed by.

float32 gives the same numbers on every device kind to within 1e-6 for a shallow model (MiniLM encodings of 512 vaswani
documents: 1.7e-7 at most between torch's AVX-512 and AVX2 kernels on one CPU, 3.1e-7 between an NVIDIA H200, its Xeon
and an AVX2-only CPU), but not for every model: SmolLM2's labels (30 layers) differed by up to 2.9e-6 in a probability
between the two kernels, SPLADE-tiny's term weights by up to 5.8e-6 (its vocabulary projection). float64 gives them to
less (SmolLM2 2.7e-7, from the steps transformers computes in float32 inside its layers, its RMS norms and rotary
angles; SPLADE-tiny 0, bit for bit), so those two models compute in float64 by default (docs/benchmark.md, "float64
where float32 drifts"). Neither float32 nor float64 keys hold a device. bfloat16 and float16 do: the same bfloat16
encodings differ by up to 2.4e-3 between a CPU's native bfloat16 instructions (AVX512-BF16, AMX) and torch's emulation
of them on a CPU without (measured on one AMD EPYC with AVX512-BF16, emulation forced by ``ATEN_CPU_CAPABILITY=avx2
ONEDNN_MAX_CPU_ISA=AVX2``), and by up to 1.6e-3 between a GPU and a CPU. :func:`arithmetic` names what a key needs:
``None`` for float32 and float64, else the device kind and, on a CPU, whether the half-precision dtype runs natively.
Where it is emulated it is slow as well (bfloat16 matrix products 36x slower than float32 on that CPU):
:func:`warn_if_slow` logs it once per job, with the ratio measured on the machine.
"""
from __future__ import annotations

import functools
import logging
import os
import platform
import time

#: CPU flags (Linux /proc/cpuinfo) whose presence gives torch native instructions for a dtype
NATIVE_FLAGS = {"bfloat16": ("avx512_bf16", "amx_bf16", "bf16"),  # bf16: aarch64's BF16 extension
                "float16": ("avx512_fp16", "amx_fp16", "fphp", "asimdhp")}
#: oneDNN's ISA names (``ONEDNN_MAX_CPU_ISA``) at or above which it uses a CPU's native bfloat16 / float16
ONEDNN_NATIVE = {"bfloat16": {"AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16",
                              "AVX10_1_512", "AVX10_1_512_AMX", "AVX10_1_512_AMX_FP16", "ALL", "DEFAULT"},
                 "float16": {"AVX512_CORE_FP16", "AVX512_CORE_AMX_FP16", "AVX10_1_512", "AVX10_1_512_AMX",
                             "AVX10_1_512_AMX_FP16", "ALL", "DEFAULT"}}
#: dtypes whose keys hold no device (see the module docstring for how far their numbers agree between devices)
DEVICE_FREE = ("float32", "float64")

log = logging.getLogger("irrepro")
_WARNED: set = set()


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (``cpuinfo``: its text, for tests); empty where there is
    none (macOS, Windows)."""
    if cpuinfo is None:
        cpuinfo = _proc_cpuinfo()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


@functools.cache
def _proc_cpuinfo() -> str:
    """``/proc/cpuinfo``, read once per process (every key of a job asks); empty where there is none."""
    try:
        with open("/proc/cpuinfo") as f:
            return f.read()
    except OSError:
        return ""


def cpu_native(dtype: str, flags: set[str] | None = None, env: dict | None = None) -> bool:
    """Whether torch's matrix products (oneDNN's) compute ``dtype`` natively on this CPU: a flag of
    :data:`NATIVE_FLAGS`, not capped below it by ``ONEDNN_MAX_CPU_ISA`` (``ATEN_CPU_CAPABILITY`` alone leaves them
    native: measured). Apple silicon counts as native."""
    env = os.environ if env is None else env
    flags = cpu_flags() if flags is None else flags
    if not flags and platform.system() == "Darwin" and platform.machine() == "arm64":
        return True
    if not set(NATIVE_FLAGS.get(dtype, ())) & flags:
        return False
    isa = env.get("ONEDNN_MAX_CPU_ISA", "").upper()
    return not isa or isa in ONEDNN_NATIVE.get(dtype, set())


def device_kind(device) -> str:
    """``cpu``, ``cuda-sm<major><minor>`` (the GPU's compute capability), ``mps`` or the torch device's type."""
    kind = getattr(device, "type", str(device).split(":")[0])
    if kind == "cuda":
        import torch

        major, minor = torch.cuda.get_device_capability(device)
        return f"cuda-sm{major}{minor}"
    return kind


def arithmetic(device, dtype: str, *, flags: set[str] | None = None, env: dict | None = None) -> str | None:
    """What a key of ``dtype`` outputs computed on ``device`` (a torch device or its name) must hold beyond the
    dtype: ``None`` for :data:`DEVICE_FREE` dtypes, else ``<device kind>`` (:func:`device_kind`), on a CPU
    ``cpu-native`` or ``cpu-emulated`` (:func:`cpu_native`)."""
    dtype = str(dtype).removeprefix("torch.")
    if dtype in DEVICE_FREE:
        return None
    kind = device_kind(device)
    if kind == "cpu":
        return "cpu-native" if cpu_native(dtype, flags, env) else "cpu-emulated"
    return kind


def matmul_ratio(dtype: str, n: int = 256, repeats: int = 3) -> float:
    """How many times slower a ``dtype`` matrix product (n x n, one thread's share of torch's threads) runs than
    float32 here: best of ``repeats`` each, measured side by side (about 0.1 s where ``dtype`` is emulated)."""
    import torch

    def best(dt):
        a, b = torch.randn(n, n).to(dt), torch.randn(n, n).to(dt)
        a @ b
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t)
        return min(times)

    return best(getattr(torch, dtype)) / max(best(torch.float32), 1e-9)


def warn_if_slow(device, dtype: str, what: str) -> float | None:
    """Log one warning per process and dtype where ``dtype`` runs emulated on this CPU (:func:`arithmetic` says
    ``cpu-emulated``), with the slowdown against float32 measured here (:func:`matmul_ratio`); returns the ratio,
    or None where nothing was logged."""
    dtype = str(dtype).removeprefix("torch.")
    if arithmetic(device, dtype) != "cpu-emulated" or dtype in _WARNED:
        return None
    _WARNED.add(dtype)
    ratio = matmul_ratio(dtype)
    log.warning("%s: %s asked for on a CPU without native %s instructions (no %s flag, or capped by "
                "ONEDNN_MAX_CPU_ISA): its matrix products run %.0fx slower than float32 here, "
                "and its numbers differ from native %s's by up to ~1e-3; dtype float32 is faster here and gives "
                "the same numbers on every machine", what, dtype, dtype, " / ".join(NATIVE_FLAGS.get(dtype, ())),
                ratio, dtype)
    return ratio


def model_arithmetic(device, dtype: str, what: str) -> str | None:
    """:func:`arithmetic` of a model about to compute in ``dtype`` on ``device`` (what its outputs' key holds), with
    :func:`warn_if_slow`'s one warning where the dtype is emulated; ``what`` names the model in the warning."""
    arith = arithmetic(device, dtype)
    if arith == "cpu-emulated":
        warn_if_slow(device, dtype, what)
    return arith
