// RUN: attn-opt %s -verify-diagnostics --convert-attn-to-nvvm=chip=sm_70

// The pass fails before it looks at the module: the error has no location.
// expected-error @unknown {{convert-attn-to-nvvm: unsupported chip 'sm_70'; expected one of sm_80, sm_86, sm_89, sm_90a}}
module {
}
