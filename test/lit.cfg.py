# -*- Python -*-

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%attn_libs", config.attn_lib_dir))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))

# The sanitizer build (scripts/test.sh --sanitize) passes its runtime and
# options to every test process.
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "LD_PRELOAD", "ASAN_OPTIONS",
                                     "UBSAN_OPTIONS"])
llvm_config.use_default_substitutions()

# Debian installs the LLVM tools unsuffixed in /usr/lib/llvm-22/bin.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)

tools = [
    "attn-opt",
    ToolSubst("mlir-opt", unresolved="fatal"),
    ToolSubst("mlir-runner", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])

# The runtime's CPU tests (test/Runtime) need attn-runtime-test, built where
# CMake finds the CUDA toolkit; the GPU suite (test/GPU) needs a GPU, torch
# and a generated manifest (ATTN_GPU_MANIFEST).
if config.cuda_toolkit_found:
    config.available_features.add("cuda-toolkit")
    llvm_config.add_tool_substitutions(["attn-runtime-test"], [config.attn_tools_dir])
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
config.substitutions.append(("%attn_gpu_manifest", config.attn_gpu_manifest))

if config.ptxas_executable:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas_executable))
if config.enable_gpu_tests:
    config.available_features.add("cuda-gpu")
