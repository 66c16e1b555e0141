# -*- Python -*-
# lit configuration of the attn regression suite.

import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit))
config.substitutions.append(
    ("%attn_runtime_probe",
     os.path.join(config.attn_obj_root, "runtime", "bin", "attn-runtime-probe")))
config.substitutions.append(
    ("%attn_runtime_lib", os.path.join(config.attn_obj_root, "runtime", "lib")))
# The CUDA driver and HIP runtime stand-ins (runtime/tools/fake-*.cpp).
config.substitutions.append(
    ("%attn_fake_cuda", os.path.join(config.attn_obj_root, "runtime", "lib",
                                     "libattn-fake-cuda.so")))
# The dialect-and-pass plugin for a stock mlir-opt (tools/attn-plugin).
config.substitutions.append(
    ("%attn_plugin", os.path.join(config.attn_obj_root, "lib", "AttnPlugin.so")))
config.substitutions.append(
    ("%attn_fake_hip", os.path.join(config.attn_obj_root, "runtime", "lib",
                                    "libattn-fake-hip.so")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# attn-bundle caches compiled variants under $XDG_CACHE_HOME/attn: keep the
# tests' entries in the build tree, not in the user's home.
config.environment["XDG_CACHE_HOME"] = os.path.join(config.attn_obj_root,
                                                    "test", "cache")
llvm_config.use_default_substitutions()
# "not" and "count" at the start of a RUN line are found through PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "mlir-opt", "mlir-runner", "mlir-translate", "llvm-objdump",
         "llvm-readelf", "split-file"]
tools.append("attn-cpu-runner")
tools.append("attn-bundle")
tools.append("attn-tiles")
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Features the GPU and toolkit tests gate on. CI has no GPU: those tests report
# UNSUPPORTED rather than fail.
ptxas = os.path.join(config.cuda_toolkit, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
if os.path.exists("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ockl.bc"):
    config.available_features.add("rocm-device-libs")
# Tests of the build's own targets (check-attn) read build.ninja.
if config.cmake_generator == "Ninja":
    config.available_features.add("ninja")
    config.substitutions.append(("%ninja", config.cmake_make_program))
if shutil.which("nvidia-smi") and os.environ.get("ATTN_GPU_TESTS", "1") != "0":
    config.available_features.add("cuda-gpu")
# The Python scripts' static check (utils/install-deps.sh installs it for
# the system Python, which runs lit and is %python).
if subprocess.run([sys.executable, "-c", "import pyflakes"],
                  capture_output=True).returncode == 0:
    config.available_features.add("pyflakes")

# Static check of the Hopper kernels' PTX: nothing touches an in-flight
# wgmma accumulator.
config.substitutions.append(
    ("%wgmma-check", "python3 %s" % os.path.join(config.attn_src_root,
                                                 "utils", "wgmma-check.py")))

# Static checks of AMD code objects (no AMD GPU needed): resources against the
# tile tables, zero spills, kernel arguments against the ABI.
config.substitutions.append(
    ("%hsaco-check", "python3 %s --tools %s" % (
        os.path.join(config.attn_src_root, "utils", "hsaco-check.py"),
        config.llvm_tools_dir)))
