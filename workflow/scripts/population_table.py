"""Mean per system and measure (rows sorted by the first measure), CSV + Markdown."""
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    s = read_scores(sm.input[0])
    t = s.pivot_table(index="system", columns="measure", values="value", aggfunc="mean")
    first = s["measure"].iloc[0] if "AP" not in t.columns else "AP"
    t = t.sort_values(first, ascending=False)
    t.insert(0, "topics", s.groupby("system")["topic"].nunique())
    t.round(4).to_csv(sm.output.csv)
    with open(sm.output.md, "w") as f:
        f.write(to_markdown(t.round(4).reset_index()))
