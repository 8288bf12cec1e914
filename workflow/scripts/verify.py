"""One paper's verify table from its values files and its reference rows (irrepro.core.verify.verify_paper)."""
import json

from irrepro.core.io import read_values
from irrepro.core.logs import log_to
from irrepro.core.verify import load_reference, verify_paper, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    table = verify_paper(sm.params.paper, load_reference(sm.input.reference), read_values(sm.input.values),
                         json.loads(sm.params.context))
    write_verify_table(table, sm.output.csv, sm.output.md)
