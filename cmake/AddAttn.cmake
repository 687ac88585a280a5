# Thin helpers over AddMLIR.cmake (cf. circt's AddCIRCT.cmake).

# A library of attn's own. It stays out of any aggregate and links the shared
# libMLIR.so rather than MLIR's static archives.
function(add_attn_library name)
  add_mlir_library(${name} EXCLUDE_FROM_LIBMLIR DISABLE_INSTALL ${ARGN})
  target_link_libraries(${name} PUBLIC MLIR)
endfunction()

# An executable that links attn's libraries and the shared libMLIR.so.
function(add_attn_tool name)
  add_llvm_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE MLIR)
endfunction()
