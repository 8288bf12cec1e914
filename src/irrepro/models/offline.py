"""Loading models from local files only (:class:`offline`)."""
from __future__ import annotations

import os


class offline:
    """``HF_HUB_OFFLINE=1`` for the duration (nothing is downloaded: everything comes from local files)."""

    def __enter__(self):
        self.prev = os.environ.get("HF_HUB_OFFLINE")
        os.environ["HF_HUB_OFFLINE"] = "1"

    def __exit__(self, *exc):
        if self.prev is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = self.prev
