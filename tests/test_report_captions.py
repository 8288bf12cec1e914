"""Every report caption (workflow/report/**/*.rst) renders as reStructuredText without errors and without a
measure like ``ERR@20`` turning into an e-mail link (fast: docutils only, no DAG)."""
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[1] / "workflow" / "report"


@pytest.mark.parametrize("caption", sorted(p.relative_to(REPORT).as_posix() for p in REPORT.rglob("*.rst")))
def test_caption_renders_cleanly(caption):
    from docutils.core import publish_parts
    html = publish_parts((REPORT / caption).read_text(), writer_name="html",
                         settings_overrides={"report_level": 5, "halt_level": 5})["body"]
    assert "problematic" not in html and "system-message" not in html, f"{caption}: reStructuredText error"
    assert "mailto:" not in html, f"{caption}: write measures as inline literals, e.g. ``DCG@10``"
