"""Fetch one declared artifact (md5-verified) from the project cache, the offline mirror or its URL."""
from pathlib import Path

from irrepro.core.logs import log_to
from irrepro.datasets.mirror import artifact_path

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p = artifact_path(sm.wildcards.name, cache_dir=sm.params.cache, mirror=sm.params.mirror)
    assert Path(p).resolve() == Path(sm.output[0]).resolve(), (p, sm.output[0])
    log.info("artifact %s ready at %s", sm.wildcards.name, p)
