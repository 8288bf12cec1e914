"""Tools that measure the workflow rather than run it, each a command: ``python -m irrepro.tools.benchmark`` (the
default and test DAGs timed cold and no-op, ``make benchmark``), ``python -m irrepro.tools.cpu_profile`` (where a
command's CPU time goes, e.g. CI's) and ``python -m irrepro.tools.scaling`` (how each heavy stage's cost grows with
its size). docs/benchmark.md and docs/scale.md show what they measured."""
