"""Verify table of the CI paper: reference rows (config/reference/ci.yaml) expanded over the configured
(collection, labeler) pairs, beside the values the table and figure rules computed."""
import json

from irrepro.core.logs import log_to
from irrepro.core.verify import build_verify_table, expand_reference, load_reference, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    values = {}
    for p in sm.input.values:
        values.update(json.load(open(p)))
    ref = expand_reference(load_reference(sm.input.reference), json.loads(sm.params.combos))
    write_verify_table(build_verify_table(ref, values), sm.output.csv, sm.output.md)
