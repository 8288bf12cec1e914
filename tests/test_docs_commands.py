"""The snakemake commands shown in the README and docs/ can be pasted: `--configfile` takes every following word
as a config file, so a target written after it is read as YAML and the run stops."""
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


def commands(text: str):
    """``(line number, command)`` of every snakemake command in fenced code blocks and inline code spans (a span
    that starts with ``--configfile`` counts: the rest of a command shown just before)."""
    fenced = False
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        spans = [line] if fenced else re.findall(r"`([^`]+)`", line)
        for span in spans:
            cmd = span.split("#", 1)[0]
            m = re.search(r"(?:^|\s|\$\(BIN\)/|\.venv/bin/)snakemake\s.*|^\s*--configfile\s.*", cmd)
            if m:
                yield i, m.group(0).strip()


def misplaced_targets(cmd: str) -> list[str]:
    """Words after ``--configfile`` (up to the next option) that are not config files."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        words = cmd.split()
    bad, taking = [], False
    for w in words:
        if w.startswith("-"):
            taking = w == "--configfile"
            continue
        placeholder = w.isupper() or w.startswith(("$", "<", "{"))  # FILE, $(CONFIG), <config>
        if taking and not w.endswith(CONFIG_SUFFIXES) and not placeholder:
            bad.append(w)
    return bad


def test_the_check_finds_a_target_after_configfile():
    text = "run `snakemake --cores 2 --configfile config/test.yaml vb_all` now\n```bash\nsnakemake --configfile " \
           "c.yaml results/v1/x.png  # no\nsnakemake --cores 1 results/v1/x.png --configfile c.yaml\n```\n" \
           "`snakemake vb_all` or `--configfile config/test.yaml vb_all` (CI)\n"
    found = [(i, misplaced_targets(c)) for i, c in commands(text)]
    assert found == [(1, ["vb_all"]), (3, ["results/v1/x.png"]), (4, []), (6, []), (6, ["vb_all"])]
    assert misplaced_targets("snakemake --cores 1 x.png --configfile FILE") == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_doc_command_names_a_target_after_configfile(doc):
    bad = [f"{doc.relative_to(REPO)}:{i}: {cmd!r} reads {misplaced_targets(cmd)} as config files"
           for i, cmd in commands(doc.read_text()) if misplaced_targets(cmd)]
    assert not bad, "name targets before --configfile:\n" + "\n".join(bad)
