"""Verify table of the bias–variance papers: the reference numbers (config/reference/bv.yaml) beside ours.

Table 8's runs are named in the paper but anonymised in the public matrix: each named run is matched to the
anonymised system with the closest Var(x_i) (to 4 decimals the paper prints), and that match is in the note.
"""
import json

from irrepro.core.logs import log_to
from irrepro.core.verify import build_verify_table, load_reference, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    values = {}
    for p in sm.input.values:
        values.update(json.load(open(p)))
    ref = load_reference(sm.input.reference)
    allsys = values.pop("table8/_all", None)
    if allsys:
        for r in ref:
            parts = r["item"].split("/")
            if parts[0] == "table8" and parts[2] == "var_x":
                best = min(allsys, key=lambda s: abs(s["var_x"] - r["paper"]))
                for key, col in (("abs_zrisk", "abs_zrisk"), ("var_rho", "var_rho"), ("var_x", "var_x"),
                                 ("cov", "cov")):
                    values[f"table8/{parts[1]}/{key}"] = {
                        "value": best[col], "note": f"matched to anonymised {best['system']} by Var(x_i)"}
    present = {k: v for k, v in values.items()}
    # keep only reference rows whose data this run computed (e.g. config/test.yaml has two of the collections)
    ref = [r for r in ref if r["item"] in present or r.get("always")]
    write_verify_table(build_verify_table(ref, present), sm.output.csv, sm.output.md)
