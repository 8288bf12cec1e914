"""Agreement of every labeler's labels with the human grades of a collection's pairs (Spearman, Cohen's kappa,
confusion matrix)."""
import pandas as pd

from irrepro.core.io import to_markdown, write_table
from irrepro.core.logs import log_to
from irrepro.labels.agreement import agreement
from irrepro.labels.stage import read_labels, read_pairs

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    pairs = read_pairs(sm.input.pairs)
    labels = pd.concat([read_labels(p) for p in sm.input.labels])
    summary, confusion = agreement(labels, pairs)
    write_table(summary, csv=sm.output.csv, float_format="%.6g")
    write_table(confusion, csv=sm.output.confusion)
    with open(sm.output.md, "w") as f:
        f.write(f"Agreement with the human grades on {sm.wildcards.collection}\n\n{to_markdown(summary, '{:.3f}')}\n")
        for name, c in confusion.groupby("labeler", sort=False):
            f.write(f"\nConfusion matrix of {name} (rows: human grade, columns: most probable grade)\n\n"
                    f"{to_markdown(c.drop(columns='labeler'), '{:.0f}')}\n")
    log.info("%s", summary.to_string(index=False))
