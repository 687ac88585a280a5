//===- Error.cpp - the runtime's thread-local last error ------------------===//

#include "Error.h"

#include <cstdarg>
#include <cstdio>

namespace attn::runtime {

static thread_local std::string lastErrorMessage;

attn_status fail(attn_status status, std::string message) {
  lastErrorMessage = std::move(message);
  return status;
}

attn_status failf(attn_status status, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return fail(status, buffer);
}

const char *lastError() { return lastErrorMessage.c_str(); }

const char *statusName(attn_status status) {
  switch (status) {
  case ATTN_OK:
    return "ATTN_OK";
  case ATTN_ERROR_INVALID_ARGUMENT:
    return "ATTN_ERROR_INVALID_ARGUMENT";
  case ATTN_ERROR_SHAPE:
    return "ATTN_ERROR_SHAPE";
  case ATTN_ERROR_STRIDE:
    return "ATTN_ERROR_STRIDE";
  case ATTN_ERROR_ALIGNMENT:
    return "ATTN_ERROR_ALIGNMENT";
  case ATTN_ERROR_DTYPE:
    return "ATTN_ERROR_DTYPE";
  case ATTN_ERROR_MANIFEST:
    return "ATTN_ERROR_MANIFEST";
  case ATTN_ERROR_NO_KERNEL:
    return "ATTN_ERROR_NO_KERNEL";
  case ATTN_ERROR_CUDA:
    return "ATTN_ERROR_CUDA";
  }
  return "ATTN_ERROR_?";
}

const char *dtypeName(attn_dtype dtype) {
  switch (dtype) {
  case ATTN_F32:
    return "f32";
  case ATTN_F16:
    return "f16";
  case ATTN_BF16:
    return "bf16";
  case ATTN_BOOL:
    return "bool";
  case ATTN_I32:
    return "i32";
  case ATTN_I64:
    return "i64";
  }
  return "?";
}

size_t dtypeSize(attn_dtype dtype) {
  switch (dtype) {
  case ATTN_F32:
    return 4;
  case ATTN_F16:
  case ATTN_BF16:
    return 2;
  case ATTN_BOOL:
    return 1;
  case ATTN_I32:
    return 4;
  case ATTN_I64:
    return 8;
  }
  return 0;
}

const char *causalName(attn_causal causal) {
  switch (causal) {
  case ATTN_CAUSAL_NONE:
    return "none";
  case ATTN_CAUSAL_TOP_LEFT:
    return "top_left";
  case ATTN_CAUSAL_BOTTOM_RIGHT:
    return "bottom_right";
  }
  return "?";
}

} // namespace attn::runtime
