"""`python -m benchmarks`: see `benchmarks/run.py`."""

import os
import sys

# One BLAS thread: on a small shared machine, BLAS threads spinning against each other
# make the small matrix products of `grouping` ten times slower (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .run import main

sys.exit(main())
