"""One paper's verify table from its values files and its reference rows (irrepro.core.verify.verify_paper), with
its scorecard on top and a figure of every numeric check row."""
import json

from irrepro.core.figures import save, verify_figure
from irrepro.core.io import read_values
from irrepro.core.logs import log_to
from irrepro.core.verify import load_reference, scorecard, scorecard_line, verify_paper, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    table = verify_paper(sm.params.paper, load_reference(sm.input.reference), read_values(sm.input.values),
                         json.loads(sm.params.context))
    line = scorecard_line(scorecard(table, sm.params.paper))
    print(f"{sm.params.paper}: {line}")
    write_verify_table(table, sm.output.csv, sm.output.md, header=f"**{sm.params.paper}**: {line}")
    save(verify_figure(table, f"{sm.params.paper}: {line}"), sm.output.pdf, sm.output.png)
