"""``irrepro`` command line: small utilities around the workflow (the workflow itself is ``snakemake``).

    irrepro compare RUNS... --qrels F [--baseline NAME] [--measures AP nDCG@10] [--test t] [--correction holm]
                    [--latex table.tex] [-o table.csv]
                                           # systems x measures with deltas, p-values and marks against a baseline
    irrepro artifacts                      # list declared artifacts (URL, md5, licence)
    irrepro fetch NAME [--mirror DIR]      # fetch one artifact into resources/artifacts, md5-verified
    irrepro scores --runs DIR --qrels F -o scores.tsv [--measures AP nDCG@10]
    irrepro scores --trec-eval F -o scores.tsv
    irrepro scores --matrix F --measure AP -o scores.tsv
    irrepro config-doc                     # the parameter table of config/README.md, from the schemas
    irrepro mirror build DIR [--configfile config/config.yaml ...]
                                           # with network: download every artifact and ir_datasets file the
                                           # config needs into an offline mirror, md5-verified (docs/cluster.md)
    irrepro mirror check DIR               # verify a mirror: MD5SUMS and the registries' md5s
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from irrepro.errors import InputError, MissingDataError


def _compare(a) -> int:
    """``irrepro compare``: the table of :func:`irrepro.stats.experiment.experiment` printed (Markdown), as CSV
    (``-o``) and as a booktabs LaTeX table (``--latex``)."""
    from irrepro.core.io import to_markdown
    from irrepro.stats.experiment import experiment, to_latex

    measures = a.measures or ["AP", "nDCG@10", "P@10"]
    table, _, _ = experiment(a.runs, a.qrels, baseline=a.baseline, measures=measures, test=a.test,
                             correction=a.correction, alpha=a.alpha, n_permutations=a.resamples,
                             n_bootstrap=a.resamples, seed=a.seed)
    print(to_markdown(table, "{:.4g}"))
    if a.baseline:
        print(f"\n▲ / ▼: significantly better / worse than {a.baseline} (paired {a.test} test, {a.correction}-"
              f"corrected over the {len(table) - 1} systems compared with it, alpha {a.alpha:g}); d_z: Cohen's d of "
              "the per-topic differences")
    if a.output:
        table.to_csv(a.output, index=False)
    if a.latex:
        Path(a.latex).write_text(to_latex(table, measures, baseline=a.baseline, test=a.test,
                                          correction=a.correction, alpha=a.alpha))
    return 0


def _scores(a) -> int:

    from irrepro.core.evaluation import DEFAULT_MEASURES, evaluate_runs
    from irrepro.core.scores import write_scores
    from irrepro.core.trec import read_matrix_csv, read_qrels, read_trec_eval_q, run_files, run_systems

    name = a.collection
    if a.runs:
        if not a.qrels:
            raise InputError("--runs needs --qrels")
        runs = run_systems(run_files(a.runs))
        df = evaluate_runs(runs, read_qrels(a.qrels), a.measures or DEFAULT_MEASURES, name, qrels_path=a.qrels,
                           log=_StderrLog())
    elif a.trec_eval:
        df = read_trec_eval_q(a.trec_eval, name, a.measures)
    elif a.matrix:
        if not a.measure:
            raise InputError("--matrix needs --measure")
        df = read_matrix_csv(a.matrix, name, a.measure)
    else:
        raise InputError("give one of --runs, --trec-eval, --matrix")
    write_scores(df, a.output)
    print(f"{a.output}: {df.system.nunique()} systems, {df.topic.nunique()} topics, measures "
          f"{sorted(df.measure.unique())}", file=sys.stderr)
    return 0


class _StderrLog:
    """Progress of ``irrepro score`` on stderr (the logger interface evaluate_runs uses)."""

    def info(self, fmt, *args):
        print(fmt % args, file=sys.stderr)


REPO = Path(__file__).resolve().parents[2]


def _merge(base: dict, new: dict) -> dict:
    """Later config files override earlier ones key by key, as Snakemake's ``--configfile A B``."""
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = v
    return base


def _mirror(a) -> int:
    from irrepro.datasets import mirrorbuild

    if a.action == "check":
        return 2 if mirrorbuild.check(a.dir) else 0
    import yaml

    from irrepro.schema import validate_config

    config: dict = {}
    for f in a.configfile or [REPO / "config" / "config.yaml"]:
        try:
            _merge(config, yaml.safe_load(Path(f).read_text()) or {})
        except OSError as e:
            raise InputError(f"cannot read config file: {e}") from None
    validate_config(config, REPO / "workflow" / "schemas")
    mirrorbuild.build(a.dir, config)
    return 0


def _ktu_cell(x):
    """A KTU for the table: below 1 is never printed as 1 (rounded down at the sixth decimal)."""
    import math

    if x is None or (isinstance(x, float) and math.isnan(x)):
        return x
    return f"{math.floor(x * 1e6) / 1e6:.6f}" if x < 1 else "1"


def _repro_versions(a) -> int:
    """Compare two result folders run for run and score table for score table: the table (CSV to ``-o``, Markdown to
    stdout: the rows whose score is not OK or whose document order differs), what is on one side only, and a verdict
    line; exit status 0 when every shared score is OK, every shared run ranks its documents alike (KTU 1), every
    score table of either folder is in both and holds the same measures, 1 otherwise."""
    from irrepro.core.io import to_markdown
    from irrepro.repro.table import compare_versions

    table, s = compare_versions(a.original, a.reproduced, depth=a.depth, tolerance=a.tolerance)
    if a.output:
        table.to_csv(a.output, index=False, float_format="%.6g")
    if s["identical"]:
        print(f"identical: {s['runs']} run files and {s['score_tables']} score tables of {a.original} and "
              f"{a.reproduced} are byte for byte the same")
        return 0
    counts = table.verdict.value_counts().to_dict()
    differ = (table.verdict != "OK") | (table.ktu < 1)
    shown = (table if a.all else table[differ]).assign(ktu=lambda t: t.ktu.map(_ktu_cell))
    if len(shown):
        print(to_markdown(shown, "{:.6g}"))
    sides = []
    for key, folder, what in (("only_in_a", a.original, "runs"), ("only_in_b", a.reproduced, "runs"),
                              ("tables_only_in_a", a.original, "score tables"),
                              ("tables_only_in_b", a.reproduced, "score tables")):
        if s[key]:
            sides.append(f"only in {folder}: {len(s[key])} {what} ({', '.join(s[key][:5])}"
                         f"{' …' if len(s[key]) > 5 else ''})")
    for name, m in s["measures_only"].items():
        for side, folder in (("a", a.original), ("b", a.reproduced)):
            if m[side]:
                sides.append(f"score table {name}: measures only in {folder}: {', '.join(m[side])}")
    if s["differing_tables"]:
        sides.append(f"score tables that differ: {', '.join(s['differing_tables'])}")
    print(f"not identical: {s['runs']} shared runs ({s['identical_runs']} identical files), "
          f"{s['score_tables']} shared score tables ({s['identical_scores']} identical); scores of the shared runs "
          + ", ".join(f"{counts.get(v, 0)} {v}" for v in ("OK", "OKish", "FAIL"))
          + f"; {table[table.ktu < 1].original.nunique()} runs rank their documents differently (KTU < 1)"
          + "".join(f"; {x}" for x in sides))
    one_sided = any(s[k] for k in ("only_in_a", "only_in_b", "tables_only_in_a", "tables_only_in_b")) \
        or bool(s["measures_only"])
    # a score table without shared runs (an import) has no per-run comparison: differing bytes are differing numbers
    imports_differ = [n for n in s["differing_tables"] if n not in s["collections"]]
    return 0 if not differ.any() and not one_sided and not imports_differ else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="irrepro", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="compare run files against a baseline: means, deltas, paired test, "
                       "corrected p-values, effect sizes (pt.Experiment's layout), as Markdown, CSV and LaTeX")
    c.add_argument("runs", nargs="+", help="run files or folders of run files (.gz/.bz2/.xz/.zst read as they are)")
    c.add_argument("--qrels", required=True, help="TREC qrels")
    c.add_argument("--baseline", help="the system (run file name without extension) the others are compared with")
    c.add_argument("--measures", nargs="+", help="ir_measures names (default: AP nDCG@10 P@10)")
    c.add_argument("--test", default="t", choices=["t", "wilcoxon", "sign", "randomisation", "bootstrap"],
                   help="paired test (default t)")
    c.add_argument("--correction", default="holm", choices=["none", "bonferroni", "holm", "bh"],
                   help="multiple-comparison correction over the systems compared with the baseline (default holm)")
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--resamples", type=int, default=10_000, help="permutations / bootstrap resamples (default 10000)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--latex", help="write a booktabs LaTeX table here")
    c.add_argument("-o", "--output", help="write the table as CSV here")
    sub.add_parser("artifacts", help="list declared artifacts")
    f = sub.add_parser("fetch", help="fetch one declared artifact (md5-verified)")
    f.add_argument("name")
    f.add_argument("--mirror", default=None, help="offline mirror (default: $IRREPRO_MIRROR)")
    f.add_argument("--cache", default="resources/artifacts")
    s = sub.add_parser("scores", help="per-topic score table from runs+qrels, trec_eval -q output or a matrix")
    s.add_argument("--runs", help="directory of TREC run files")
    s.add_argument("--qrels", help="TREC qrels (with --runs)")
    s.add_argument("--trec-eval", help="trec_eval -q output")
    s.add_argument("--matrix", help="topic-by-system CSV")
    s.add_argument("--measure", help="the measure of --matrix")
    s.add_argument("--measures", nargs="+", help="measures (ir_measures names)")
    s.add_argument("--collection", default="mine", help="collection name in the table")
    s.add_argument("-o", "--output", required=True)
    d = sub.add_parser("config-doc", help="print the parameter table of config/README.md from the schemas")
    d.add_argument("--schemas", default=str(Path(__file__).resolve().parents[2] / "workflow" / "schemas"))
    m = sub.add_parser("mirror", help="build (with network) or check an offline mirror")
    m.add_argument("action", choices=["build", "check"])
    m.add_argument("dir", help="the mirror directory")
    m.add_argument("--configfile", nargs="+", help="config file(s) whose data to mirror (default: config/config.yaml)")
    r = sub.add_parser("repro-versions", help="compare two result folders (results/<a> results/<b>) run for run: "
                       "KTU, RBO, RMSE, p and an OK / OKish / FAIL verdict per score, or 'identical'")
    r.add_argument("original", help="the original result folder, e.g. results/v1")
    r.add_argument("reproduced", help="the reproduced result folder, e.g. a copy of results/v1 from another machine")
    r.add_argument("-o", "--output", help="CSV of every run x measure")
    r.add_argument("--depth", type=int, default=1000, help="ranks compared by KTU and RBO (default 1000)")
    r.add_argument("--tolerance", type=float, default=0.0005, help="OKish tolerance (default 0.0005, Pyserini's)")
    r.add_argument("--all", action="store_true", help="print every row, not only those that are not OK")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "artifacts":
            from irrepro.datasets.mirror import ARTIFACTS
            for art in ARTIFACTS.values():
                print(f"{art.name}\t{art.md5}\t{art.url}\t{art.licence}")
            return 0
        if a.cmd == "fetch":
            from irrepro.datasets.mirror import artifact_path
            print(artifact_path(a.name, cache_dir=a.cache, mirror=a.mirror))
            return 0
        if a.cmd == "config-doc":
            from irrepro.configdoc import parameter_table
            print(parameter_table(a.schemas))
            return 0
        if a.cmd == "mirror":
            return _mirror(a)
        if a.cmd == "repro-versions":
            return _repro_versions(a)
        if a.cmd == "compare":
            return _compare(a)
        return _scores(a)
    except (InputError, MissingDataError) as e:
        print(f"irrepro: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
