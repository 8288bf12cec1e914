"""The SLURM test cluster's claim on /etc/slurm/slurm.conf (tests/slurm/cluster.py:link_config), on temporary paths:
no SLURM needed."""
from slurm.cluster import link_config


def _conf(path, cluster):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"ClusterName={cluster}\nSlurmctldHost=localhost\n")
    return path


def test_no_config_is_linked(tmp_path):
    etc, conf = tmp_path / "etc" / "slurm.conf", _conf(tmp_path / "new" / "slurm.conf", "irrepro-test")
    assert link_config(etc, conf) and etc.resolve() == conf.resolve()


def test_a_dead_test_clusters_link_is_replaced(tmp_path):
    conf = _conf(tmp_path / "new" / "slurm.conf", "irrepro-test")
    old = _conf(tmp_path / "old" / "slurm.conf", "irrepro-test")
    etc = tmp_path / "etc" / "slurm.conf"
    etc.parent.mkdir()
    etc.symlink_to(old)  # the earlier cluster's scratch still exists: its config would be read by the jobs
    assert link_config(etc, conf) and etc.resolve() == conf.resolve()
    etc.unlink()
    etc.symlink_to(tmp_path / "gone" / "slurm.conf")  # dangling
    assert link_config(etc, conf) and etc.resolve() == conf.resolve()


def test_a_sites_own_config_is_left_alone(tmp_path):
    conf = _conf(tmp_path / "new" / "slurm.conf", "irrepro-test")
    site = _conf(tmp_path / "site" / "slurm.conf", "production")
    etc = tmp_path / "etc" / "slurm.conf"
    etc.parent.mkdir()
    etc.symlink_to(site)
    assert not link_config(etc, conf) and etc.resolve() == site.resolve()
    etc.unlink()
    _conf(etc, "production")  # a plain file
    assert not link_config(etc, conf) and not etc.is_symlink() and "production" in etc.read_text()
