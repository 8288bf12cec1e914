"""irrepro: reproducible information-retrieval evaluation experiments.

The library is pure: arrays and data frames in, arrays and data frames out, seeds passed in.
The Snakemake workflow (``Snakefile``, ``workflow/``) does the I/O and calls into it.
"""

__version__ = "0.1.0"
