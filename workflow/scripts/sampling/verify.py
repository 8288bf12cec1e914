"""Verify table of the sampling paper (reference: config/reference/sampling.yaml)."""
import json

from irrepro.core.logs import log_to
from irrepro.core.verify import build_verify_table, load_reference, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    values = {}
    for p in sm.input.values:
        values.update(json.load(open(p)))
    ref = load_reference(sm.input.reference)
    write_verify_table(build_verify_table(ref, values), sm.output.csv, sm.output.md)
