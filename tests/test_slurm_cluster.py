"""The SLURM test cluster's claim on /etc/slurm/slurm.conf (tests/slurm/cluster.py:link_config), on temporary paths:
no SLURM needed."""
from slurm.cluster import link_config


def _conf(path, cluster):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"ClusterName={cluster}\nSlurmctldHost=localhost\n")
    return path


def _setup(tmp_path, link_to=None):
    """This cluster's config, and /etc/slurm/slurm.conf (under tmp_path) as a link to ``link_to`` if given."""
    conf = _conf(tmp_path / "new" / "slurm.conf", "irrepro-test")
    etc = tmp_path / "etc" / "slurm.conf"
    etc.parent.mkdir()
    if link_to is not None:
        etc.symlink_to(link_to)
    return etc, conf


def test_no_config_is_linked(tmp_path):
    etc, conf = _setup(tmp_path)
    assert link_config(etc, conf) and etc.resolve() == conf.resolve()


def test_a_dead_test_clusters_link_is_replaced(tmp_path):
    # the earlier cluster's scratch still exists: its config would be read by the jobs
    etc, conf = _setup(tmp_path, link_to=_conf(tmp_path / "old" / "slurm.conf", "irrepro-test"))
    assert link_config(etc, conf) and etc.resolve() == conf.resolve()
    etc.unlink()
    etc.symlink_to(tmp_path / "gone" / "slurm.conf")  # dangling
    assert link_config(etc, conf) and etc.resolve() == conf.resolve()


def test_a_sites_own_config_is_left_alone(tmp_path):
    site = _conf(tmp_path / "site" / "slurm.conf", "production")
    etc, conf = _setup(tmp_path, link_to=site)
    assert not link_config(etc, conf) and etc.resolve() == site.resolve()
    etc.unlink()
    _conf(etc, "production")  # a plain file
    assert not link_config(etc, conf) and not etc.is_symlink() and "production" in etc.read_text()
