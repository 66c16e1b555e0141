//===- Status.h - Status codes with a message -----------------------------===//

#ifndef ATTN_RUNTIME_STATUS_H
#define ATTN_RUNTIME_STATUS_H

#include "attn_runtime.h"

#include <string>

namespace attn {

/// What every internal step returns: the C status and, on failure, the
/// message the C API hands to attn_last_error().
struct Status {
  attn_status code = ATTN_STATUS_SUCCESS;
  std::string message;

  static Status ok() { return {}; }
  static Status error(attn_status code, std::string message) {
    return {code, std::move(message)};
  }
  bool isOk() const { return code == ATTN_STATUS_SUCCESS; }
};

} // namespace attn

#endif // ATTN_RUNTIME_STATUS_H
