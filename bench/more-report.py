#!/usr/bin/env python3
"""bench/more-report.py OUT - the FI_MORE table and target verdicts from a
directory bench/more-rate.sh wrote (run-all's OUT/more), on its own; the
parsing is report_fi_more's, which bench/report.py uses too."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_fi_more  # noqa: E402

rows = report_fi_more.load_more(sys.argv[1])
sys.stdout.write("\n".join(report_fi_more.more_lines(rows) +
                           report_fi_more.target_lines(rows)) + "\n")
