"""One paper's verify table from its values files and its reference rows (irrepro.core.verify.verify_paper), with
its scorecard on top and a figure with one panel per table (cells coloured by verdict). The evidence of explained
rows is computed from the tables in ``input.evidence`` (score tables ``.tsv``, other tables ``.csv``), which the
paper's ``irrepro.papers.<paper>.evidence.evidence_data`` turns, with ``params.evidence``, into the functions'
inputs, and from the reference file itself (its other keys: the paper's own inputs, e.g. vb's case studies)."""
import importlib
import json
from pathlib import Path

import pandas as pd
import yaml

from irrepro.core.figures import save, verify_panels
from irrepro.core.io import read_values
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.core.verify import load_reference, scorecard, scorecard_line, verify_paper, write_verify_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    reference = load_reference(sm.input.reference)
    data = {}
    if sm.input.evidence:
        frames = {Path(p).stem: read_scores(p) if p.endswith(".tsv") else pd.read_csv(p) for p in sm.input.evidence}
        data = importlib.import_module(f"irrepro.papers.{sm.params.paper}.evidence").evidence_data(
            frames, json.loads(sm.params.evidence))
    with open(sm.input.reference) as f:
        data["document"] = yaml.safe_load(f)  # the reference file's other keys: inputs of the paper (vb's cases)
    table = verify_paper(sm.params.paper, reference, read_values(sm.input.values), json.loads(sm.params.context),
                         data)
    line = scorecard_line(scorecard(table, sm.params.paper))
    print(f"{sm.params.paper}: {line}")
    write_verify_table(table, sm.output.csv, sm.output.md, header=f"**{sm.params.paper}**: {line}")
    save(verify_panels(table, f"{sm.params.paper}: {line}"), sm.output.pdf, sm.output.png)
