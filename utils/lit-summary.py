#!/usr/bin/env python3
"""Reduces lit's result counts to the one line CI reads:
"N passed, N failed, N skipped". Exits 1 when anything failed or no test ran."""
import re
import sys

PASSED = ("Passed", "Expectedly Failed")
FAILED = ("Failed", "Unexpectedly Passed", "Timed Out", "Unresolved")
SKIPPED = ("Unsupported", "Skipped", "Excluded")

counts = {}
with open(sys.argv[1], errors="replace") as log:
    for line in log:
        # "  Passed     : 114 (99.13%)"
        m = re.match(r"^\s*(%s)\s*:\s*(\d+)(\s+\([\d.]+%%\))?\s*$" %
                     "|".join(PASSED + FAILED + SKIPPED), line)
        if m:
            counts[m.group(1)] = int(m.group(2))
passed = sum(counts.get(k, 0) for k in PASSED)
failed = sum(counts.get(k, 0) for k in FAILED)
skipped = sum(counts.get(k, 0) for k in SKIPPED)
if skipped:
    print("skipped tests are the GPU tests (no GPU here) and tests whose "
          "toolkit is absent: see UNSUPPORTED lines above")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
