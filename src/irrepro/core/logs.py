"""Send a workflow job's output (Python and native libraries alike) to its Snakemake log file."""
from __future__ import annotations

import contextlib
import logging
import os
import sys


@contextlib.contextmanager
def log_to(path):
    """Redirect file descriptors 1 and 2 (so PISA's C++ progress bars too) and ``logging`` to ``path``; an exception
    leaving the block is written to the log (one ``job failed:`` line, then the traceback) and re-raised."""
    if not path:
        yield logging.getLogger("irrepro")
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    logger = logging.getLogger("irrepro")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield logger
    except BaseException as e:
        # the job's own log must say why it failed (Snakemake's console shows it too, the log is where users look)
        import traceback

        logger.error("job failed: %s: %s", type(e).__name__, e)
        traceback.print_exc(file=sys.stderr)
        raise
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        logger.removeHandler(handler)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(fd)
        os.close(saved[0])
        os.close(saved[1])
