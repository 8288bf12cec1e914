"""`snakemake --report` builds a self-contained HTML report with every figure and verify table, each captioned, and
the report renders in a browser (headless Chromium: a screenshot, and a caption shown after clicking through).

Tables that are not in the report and captions whose reStructuredText does not render cleanly are reported as
warnings (owners: the papers' rules and workflow/report/<paper>/*.rst); set IRREPRO_STRICT_REPORT=1 to make them
failures.
"""
import json
import os
import re
import shutil
import subprocess
import warnings
from html import unescape

import pytest

from conftest import snakemake

pytestmark = pytest.mark.integration

V = "results/test"
STRICT = os.environ.get("IRREPRO_STRICT_REPORT") == "1"


def report_results(html):
    """The report's result index: {path: {caption, mime_type, labels, job_properties, ...}}."""
    dec = json.JSONDecoder()
    out = {}
    for m in re.finditer(r'"(results/[^"]+)": (?=\{"name")', html):
        out[m.group(1)], _ = dec.raw_decode(html, m.end())
    return out


def text(caption_html):
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", caption_html))).strip()


@pytest.fixture(scope="module")
def report(dag):
    out = dag / "report.html"
    snakemake(dag, "--report", str(out))
    html = out.read_text()
    return out, html, report_results(html)


def test_report_has_workflow_description_and_categories(report):
    _, html, results = report
    assert len(html) > 100_000
    assert "irrepro" in html and "reproduces five IR-evaluation papers" in html  # workflow/report/workflow.rst
    cats = {c for c in ("Spine", "Verify", "Bias-variance", "Sampling", "VB-Score", "CI with LLM labels")
            if f'"{c}"' in html}
    assert {"Spine", "Verify"} <= cats
    assert "CI with LLM labels" in cats, "the CI paper's tables and figures are missing from the report"


def test_every_figure_and_verify_table_is_in_the_report_with_a_caption(dag, report):
    _, _, results = report
    root = dag / V
    files = sorted(str(p.relative_to(dag)) for p in root.rglob("*") if p.is_file() and "logs" not in p.parts)
    figures = [f for f in files if f.endswith(".png")]
    verify = [f for f in files if f.endswith("verify.md")]
    assert len(figures) >= 5 and verify
    missing = [f for f in figures + verify if f not in results]
    assert not missing, f"figures / verify tables not in the report (mark them with report(..., caption=...)): {missing}"
    short = {f: text(results[f]["caption"]) for f in figures + verify if len(text(results[f]["caption"])) < 80}
    assert not short, f"captions too short to say what, which data and how it compares: {short}"

    # the population tables (mean of every configured measure per system) are report items of their own
    population = [f for f in files if f.startswith(f"{V}/tables/population_") and f.endswith(".md")]
    assert population and all(f in results for f in population), population

    problems = []
    tables = [f for f in files if f.endswith(".md")]
    problems += [f"table not in the report: {f}" for f in tables if f not in results]
    for f, r in results.items():
        c = r["caption"]
        if "problematic" in c or "system-message" in c:
            problems.append(f"reStructuredText error in the caption of {f} (escape | and * as \\| \\*)")
        if "mailto:" in c:
            problems.append(f"caption of {f}: a measure like ERR@20 renders as an e-mail link (write ``ERR@20``)")
    if problems:
        msg = "report: " + "; ".join(problems)
        if STRICT:
            pytest.fail(msg)
        warnings.warn(msg)


# ------------------------------------------------------------------ rendering in a browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

# Clicks through the report's menu after load: a plain string clicks the element with that text (a category),
# "PATH::ICON" (or "PATH|LABEL|LABEL::ICON") clicks a result's button (icon "eye" = view, "information-circle" = caption and metadata).
CLICK_JS = r"""<script>
function irreproClick(t) {
  if (t.includes('::')) {
    const [f, ic] = t.split('::');
    // PATH: the row showing that path, or (results shown by their labels) the row whose cells are all PATH's labels
    const rows = [...document.querySelectorAll('tr')];
    const row = rows.find(r => [...r.querySelectorAll('td')].some(e => e.textContent.trim() === f))
      || rows.find(r => {
           const labels = f.split('|').slice(1), cells = [...r.querySelectorAll('td')].map(e => e.textContent.trim()).filter(x => x);
           return labels.length && cells.length && cells.every(x => labels.includes(x)) && r.querySelector('a[iconname]');
         });
    const a = row && row.querySelector('a[iconname="' + ic + '"]');
    if (a) a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
    document.body.setAttribute('data-irrepro-click', a ? 'ok' : 'missing ' + t);
    return;
  }
  const els = [...document.querySelectorAll('a,button,li,span,div')].filter(e => e.textContent.trim() === t);
  if (els.length) els[els.length - 1].click();
}
window.addEventListener('load', () => CLICKS.forEach((c, i) => setTimeout(() => irreproClick(c), 1500 * (i + 1))));
</script>"""


def chromium(html_path, out_png, clicks=(), dump_dom=False):
    """Open the report in headless Chromium, click through `clicks`, screenshot it (or return the rendered DOM)."""
    html = html_path.read_text()
    i = html.rfind("</body>")
    page = out_png.with_suffix(".html")
    page.write_text(html[:i] + CLICK_JS.replace("CLICKS", json.dumps(list(clicks))) + html[i:])
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,1000",
           f"--virtual-time-budget={2000 * (len(clicks) + 2)}"]
    cmd += ["--dump-dom"] if dump_dom else [f"--screenshot={out_png}"]
    p = subprocess.run(cmd + [page.as_uri()], capture_output=True, text=True, timeout=180)
    return p.stdout


def needs_chromium():
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium missing in CI: .ci/run must call tests/slurm/install.sh")
        pytest.skip("headless Chromium not installed (apt-get install chromium)")


def test_report_renders_in_chromium(report, tmp_path):
    needs_chromium()
    import matplotlib.image as mpimg

    path, _, results = report
    shot = tmp_path / "report.png"
    chromium(path, shot)
    img = mpimg.imread(shot)
    assert img.shape[0] >= 900 and img.shape[1] >= 1300
    assert img[..., :3].std() > 0.05, "blank screenshot: the report did not render"

    # open the population figure's caption through the menu (category "Spine", drawn by the spine), as a reader
    # would, and find its text in the rendered page
    fig = next(f for f in results if f.startswith(f"{V}/figures/population_") and f.endswith(".png"))
    category = "Spine"
    key = "|".join([fig, *map(str, (results[fig].get("labels") or {}).values())])
    dom = chromium(path, tmp_path / "caption.png", [category, f"{key}::information-circle"], dump_dom=True)
    assert 'data-irrepro-click="ok"' in dom, f"could not open {fig} in category {category}"
    words = text(results[fig]["caption"]).split()[:6]
    shown = text(re.sub(r"<script.*?</script>|<style.*?</style>", " ", dom, flags=re.S))  # what is on the page
    assert " ".join(words) in shown, f"caption of {fig} not shown in the rendered report"
