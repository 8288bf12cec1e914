from irrepro.cli import main
from irrepro.core.scores import read_scores, to_matrix


def test_cli_scores_from_runs_and_errors(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.run").write_text("1 Q0 d1 1 2 a\n1 Q0 d2 2 1 a\n")
    (tmp_path / "q").write_text("1 0 d1 0\n1 0 d2 1\n")
    out = tmp_path / "s.tsv"
    assert main(["scores", "--runs", str(runs), "--qrels", str(tmp_path / "q"), "--measures", "AP", "-o", str(out)]) == 0
    assert to_matrix(read_scores(out), "AP").loc["1", "a"] == 0.5
    (runs / "b.run").write_text("1 Q0 d1 x 2 b\n")
    assert main(["scores", "--runs", str(runs), "--qrels", str(tmp_path / "q"), "-o", str(out)]) == 2
    assert "b.run:1: rank 'x' is not an integer" in capsys.readouterr().err


def test_cli_artifacts_lists_registry(capsys):
    assert main(["artifacts"]) == 0
    assert "urbano/sigir2019-statistical/adhoc8_ap.csv" in capsys.readouterr().out
