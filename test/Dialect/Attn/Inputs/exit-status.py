"""Runs a command and prints its stderr, then "exit status: N".

The malformed-input tests check the status is exactly 1 (a diagnostic), not
a signal or an assertion, which `not` alone cannot tell apart from other
non-zero statuses.
"""
import subprocess
import sys

proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                      stderr=subprocess.PIPE)
sys.stdout.write(proc.stderr.decode("utf-8", "replace"))
print("exit status: %d" % proc.returncode)
