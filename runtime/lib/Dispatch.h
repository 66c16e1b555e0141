//===- Dispatch.h - Check a call and pick the variant to launch ----------===//
//
// Pure host logic, shared by the CUDA and HIP backends and testable without a
// GPU: argument validation, then xformers-style dispatch (the first variant
// whose fields match and whose conditions hold).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_DISPATCH_H
#define ATTN_RUNTIME_DISPATCH_H

#include "Bundle.h"

namespace attn {

/// ATTN_STATUS_INVALID_ARGUMENT naming the argument when the call is
/// malformed whatever the bundle holds.
Status validateParams(const attn_fwd_params &params);

/// Returns the empty string when `variant` can run the (validated) call,
/// else the first field or condition that does not hold.
std::string whyNot(const Variant &variant, const attn_fwd_params &params);

/// validateParams, then the first matching variant; ATTN_STATUS_NO_VARIANT
/// lists, per variant, why it was passed over.
Status selectVariant(const BundleInfo &bundle, const attn_fwd_params &params,
                     int &index);

} // namespace attn

#endif // ATTN_RUNTIME_DISPATCH_H
