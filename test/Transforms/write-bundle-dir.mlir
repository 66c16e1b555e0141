// A missing or unusable output directory is a diagnostic.
// RUN: attn-opt %s -verify-diagnostics --attn-write-bundle
// RUN: attn-opt %s -verify-diagnostics --attn-write-bundle="dir=/dev/null/bundle"

// expected-error-re @+1 {{attn-write-bundle: {{option 'dir' \(output directory\) is required|cannot create directory '/dev/null/bundle'}}}}
module attributes {attn.kernels = [{module = "k", name = "k", platform = "cuda", chip = "sm_90a"}]} {
}
