"""`python -m benchmarks`: see `benchmarks/run.py`; `python -m benchmarks report` writes the docs' tables."""

import os
import sys

# One BLAS thread: on a small shared machine, BLAS threads spinning against each other
# make the small matrix products of `grouping` ten times slower (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if sys.argv[1:2] == ["report"]:
    from .report import report_main

    sys.exit(report_main(sys.argv[2:]))

from .run import main

sys.exit(main())
