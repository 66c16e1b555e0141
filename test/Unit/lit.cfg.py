# -*- Python -*-
# lit configuration running the GoogleTest binaries of unittests/, so that
# check-attn runs (and counts) every unit test.

import os

import lit.formats

config.name = "ATTN-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.attn_obj_root, "unittests")
config.test_source_root = config.test_exec_root
# Every executable under unittests/ whose name ends in "Tests".
config.test_format = lit.formats.GoogleTest(".", "Tests")
