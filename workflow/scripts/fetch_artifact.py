"""Fetch one declared artifact (md5-verified) from the project cache, the offline mirror or its URL."""
from pathlib import Path

from irrepro.core.logs import log_to
from irrepro.datasets.mirror import artifact_path

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    out, name = Path(sm.output[0]), sm.wildcards.name
    cache = out.parents[len(Path(name).parts) - 1]  # the output is <cache>/<name>
    p = artifact_path(name, cache_dir=cache, mirror=sm.params.mirror)
    assert Path(p).resolve() == out.resolve(), (p, out)
    log.info("artifact %s ready at %s", name, p)
