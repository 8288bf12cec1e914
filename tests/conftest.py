import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_dir():
    """The offline mirror: $IRREPRO_MIRROR, else ../shared/mirror beside the repo (CI's layout)."""
    m = os.environ.get("IRREPRO_MIRROR")
    if m and Path(m).is_dir():
        return Path(m).resolve()
    cand = REPO.parent / "shared" / "mirror"
    return cand if cand.is_dir() else None


# ir_datasets fixes its paths when it is imported, so IR_DATASETS_HOME must point at a writable copy of the mirror
# before any test imports it.
_IRDS_HOME = None
if mirror_dir() is not None:
    import tempfile

    from irrepro.mirror import ensure_ir_datasets_home

    _IRDS_HOME = ensure_ir_datasets_home(Path(tempfile.mkdtemp(prefix="irrepro-irds-")), mirror_dir())
    os.environ.setdefault("IRREPRO_MIRROR", str(mirror_dir()))


@pytest.fixture(scope="session")
def mirror():
    m = mirror_dir()
    if m is None:
        pytest.skip("no offline mirror (set IRREPRO_MIRROR) and no network data")
    return m


@pytest.fixture(scope="session")
def irds_home(tmp_path_factory, mirror):
    """The writable IR_DATASETS_HOME seeded from the mirror for this session."""
    return _IRDS_HOME
