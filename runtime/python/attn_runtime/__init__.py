"""Python binding of the attn runtime (runtime/include/attn_runtime.h).

    import attn_runtime
    lib = attn_runtime.load(bundle_dir)
    out, lse = lib.attention(q, k, v, causal=False, scale=None, window=None,
                             bias=None, return_lse=False)

q, k, v are torch CUDA tensors laid out [B, H, S, D] (any strides with a unit
last-dim stride); the kernel runs on torch's current stream. lse is None
unless return_lse. Failures raise AttnError carrying the runtime's status and
message. The binding is ctypes only, so it needs no compiler; torch is
imported on first use so the module loads (and is tested) without it.
"""

import ctypes
import math
import os
import threading

__all__ = ["AttnError", "Library", "load", "find_library", "API_VERSION"]

API_VERSION = 1

STATUS_NAMES = {
    0: "ATTN_STATUS_SUCCESS",
    1: "ATTN_STATUS_INVALID_ARGUMENT",
    2: "ATTN_STATUS_BAD_BUNDLE",
    3: "ATTN_STATUS_NO_DRIVER",
    4: "ATTN_STATUS_UNSUPPORTED_GPU",
    5: "ATTN_STATUS_NO_VARIANT",
    6: "ATTN_STATUS_LAUNCH_FAILED",
    7: "ATTN_STATUS_DRIVER_ERROR",
}
STATUS = {name[len("ATTN_STATUS_"):]: code for code, name in STATUS_NAMES.items()}

DTYPES = {"f16": 0, "bf16": 1, "f32": 2}
MASKS = {"none": 0, "causal": 1, "causal_bottom_right": 2, "sliding_window": 3}
BIAS_KINDS = {"none": 0, "same": 1, "f32": 2}


class AttnError(RuntimeError):
    """A runtime call failed: `status` is the attn_status code, `status_name`
    its name ("ATTN_STATUS_NO_VARIANT", ...), `message` the runtime's text."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = STATUS_NAMES.get(status, "ATTN_STATUS_UNKNOWN")
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


class _FwdParams(ctypes.Structure):
    # Mirrors attn_fwd_params; the size is checked against the library's.
    _fields_ = [
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("bias", ctypes.c_void_p),
        ("batch", ctypes.c_int32),
        ("heads_q", ctypes.c_int32),
        ("heads_kv", ctypes.c_int32),
        ("seqlen_q", ctypes.c_int32),
        ("seqlen_k", ctypes.c_int32),
        ("head_dim", ctypes.c_int32),
        ("head_dim_v", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("mask", ctypes.c_int32),
        ("bias_kind", ctypes.c_int32),
        ("q_stride", ctypes.c_int64 * 4),
        ("k_stride", ctypes.c_int64 * 4),
        ("v_stride", ctypes.c_int64 * 4),
        ("o_stride", ctypes.c_int64 * 4),
        ("lse_stride", ctypes.c_int64 * 2),
        ("bias_stride", ctypes.c_int64 * 4),
        ("scale", ctypes.c_float),
        ("softcap", ctypes.c_float),
        ("window_left", ctypes.c_int32),
        ("window_right", ctypes.c_int32),
        ("stream", ctypes.c_void_p),
    ]


_LIB_NAME = "libattn_runtime.so"
_lock = threading.Lock()
_clib = None


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.abspath(os.path.join(here, "..", "..", ".."))
    yield os.path.join(here, _LIB_NAME)
    for build in ("build-runtime/lib", "build/runtime/lib"):
        yield os.path.join(repo, build, _LIB_NAME)
    yield os.path.join("/tmp/attn-runtime-build/lib", _LIB_NAME)


def find_library():
    """Path of libattn_runtime.so: $ATTN_RUNTIME_LIB, else next to this
    package, else the repository's usual build directories."""
    env = os.environ.get("ATTN_RUNTIME_LIB")
    if env:
        return env
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            return path
        tried.append(path)
    raise AttnError(STATUS["NO_DRIVER"],
                    f"cannot find {_LIB_NAME} (tried {', '.join(tried)}); "
                    "build runtime/ with CMake or set ATTN_RUNTIME_LIB")


def _library():
    global _clib
    with _lock:
        if _clib is not None:
            return _clib
        path = find_library()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise AttnError(STATUS["NO_DRIVER"],
                            f"cannot load {path}: {e}") from None
        P = ctypes.c_void_p
        lib.attn_runtime_api_version.restype = ctypes.c_int
        lib.attn_fwd_params_size.restype = ctypes.c_size_t
        lib.attn_last_error.restype = ctypes.c_char_p
        lib.attn_bundle_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
        lib.attn_bundle_load.restype = ctypes.c_int
        lib.attn_bundle_destroy.argtypes = [P]
        lib.attn_bundle_destroy.restype = None
        lib.attn_bundle_platform.argtypes = [P]
        lib.attn_bundle_platform.restype = ctypes.c_int
        lib.attn_bundle_chip.argtypes = [P]
        lib.attn_bundle_chip.restype = ctypes.c_char_p
        lib.attn_bundle_variant_count.argtypes = [P]
        lib.attn_bundle_variant_count.restype = ctypes.c_int
        lib.attn_bundle_variant_name.argtypes = [P, ctypes.c_int]
        lib.attn_bundle_variant_name.restype = ctypes.c_char_p
        params = ctypes.POINTER(_FwdParams)
        lib.attn_select_variant.argtypes = [P, params,
                                            ctypes.POINTER(ctypes.c_int)]
        lib.attn_select_variant.restype = ctypes.c_int
        lib.attn_forward.argtypes = [P, params]
        lib.attn_forward.restype = ctypes.c_int
        version = lib.attn_runtime_api_version()
        if version != API_VERSION:
            raise AttnError(STATUS["INVALID_ARGUMENT"],
                            f"{path} has API version {version}, this module "
                            f"was written for {API_VERSION}")
        size = lib.attn_fwd_params_size()
        if size != ctypes.sizeof(_FwdParams):
            raise AttnError(STATUS["INVALID_ARGUMENT"],
                            f"attn_fwd_params is {size} bytes in {path} but "
                            f"{ctypes.sizeof(_FwdParams)} here")
        _clib = lib
        return lib


def _check(lib, status):
    if status != 0:
        raise AttnError(status, lib.attn_last_error().decode(errors="replace"))


def resolve_mask(causal, window, seqlen_q, seqlen_k):
    """(mask name, window_left, window_right) for attention()'s arguments.

    causal=True is top-left aligned like torch SDPA's is_causal;
    causal="bottom_right" aligns the diagonal to the last key. A window
    (left, right), None meaning unbounded, is bottom-right aligned; with
    causal it is cut at the diagonal."""
    if causal not in (False, True, "bottom_right", "top_left"):
        raise ValueError(f"causal must be False, True, 'top_left' or "
                         f"'bottom_right', got {causal!r}")
    if window is None:
        if causal in (True, "top_left"):
            return "causal", -1, -1
        if causal == "bottom_right":
            return "causal_bottom_right", -1, -1
        return "none", -1, -1
    if len(window) != 2:
        raise ValueError(f"window must be (left, right), got {window!r}")
    left, right = (-1 if w is None else int(w) for w in window)
    if causal:
        if causal in (True, "top_left") and seqlen_q != seqlen_k:
            raise ValueError("a window with top-left causal masking needs "
                             "seqlen_q == seqlen_k; use "
                             "causal='bottom_right'")
        right = 0 if right < 0 else min(right, 0)
    if left < 0 and right < 0:
        return "none", -1, -1
    return "sliding_window", left, right


def broadcast_strides(shape, strides, target):
    """Strides of a tensor broadcast to `target` (4-D): leading dimensions
    added and size-1 dimensions stretched get stride 0."""
    if len(shape) > len(target):
        raise ValueError(f"bias has {len(shape)} dimensions, at most "
                         f"{len(target)} expected")
    pad = len(target) - len(shape)
    shape = [1] * pad + list(shape)
    strides = [0] * pad + list(strides)
    out = []
    for dim, (n, s, want) in enumerate(zip(shape, strides, target)):
        if n == want:
            out.append(s if want > 1 else 0)
        elif n == 1:
            out.append(0)
        else:
            raise ValueError(f"bias shape {tuple(shape[pad:])} does not "
                             f"broadcast to {tuple(target)} (dimension {dim})")
    return out


class Library:
    """A loaded bundle. Thread-safe; modules are loaded on first launch."""

    def __init__(self, bundle_dir):
        self._clib = _library()
        handle = ctypes.c_void_p()
        _check(self._clib,
               self._clib.attn_bundle_load(os.fsencode(bundle_dir),
                                           ctypes.byref(handle)))
        self._handle = handle
        self.bundle_dir = bundle_dir
        self.platform = ("cuda", "hip")[
            self._clib.attn_bundle_platform(handle)]
        self.chip = self._clib.attn_bundle_chip(handle).decode()
        self.variants = [
            self._clib.attn_bundle_variant_name(handle, i).decode()
            for i in range(self._clib.attn_bundle_variant_count(handle))]

    def close(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and self._clib is not None:
            self._clib.attn_bundle_destroy(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:  # Interpreter shutdown: nothing left to free.
            pass

    def __repr__(self):
        return (f"<attn_runtime.Library {self.bundle_dir!r} {self.platform} "
                f"{self.chip}, {len(self.variants)} variants>")

    # -- torch-free core, also used by the tests ----------------------------

    def make_params(self, *, q, k, v, o, dtype, shape_q, shape_k, shape_v,
                    lse=None, lse_strides=(0, 0), bias=None,
                    bias_kind="none", bias_strides=(0, 0, 0, 0),
                    mask="none", window=(-1, -1), scale=None, softcap=0.0,
                    stream=0):
        """attn_fwd_params from plain values: q, k, v, o (and lse, bias) are
        (device pointer, strides) pairs, shapes are 4-D."""
        B, Hq, Sq, D = shape_q
        _, Hkv, Sk, _ = shape_k
        Dv = shape_v[3]
        p = _FwdParams()
        p.q, p.k, p.v, p.o = q[0], k[0], v[0], o[0]
        p.q_stride[:], p.k_stride[:] = q[1], k[1]
        p.v_stride[:], p.o_stride[:] = v[1], o[1]
        p.lse = lse
        p.lse_stride[:] = lse_strides
        p.bias = bias
        p.bias_stride[:] = bias_strides
        p.batch, p.heads_q, p.heads_kv = B, Hq, Hkv
        p.seqlen_q, p.seqlen_k, p.head_dim, p.head_dim_v = Sq, Sk, D, Dv
        p.dtype = DTYPES[dtype]
        p.mask = MASKS[mask]
        p.bias_kind = BIAS_KINDS[bias_kind]
        p.scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
        p.softcap = float(softcap or 0.0)
        p.window_left, p.window_right = window
        p.stream = stream
        return p

    def select(self, params):
        """Name of the variant attn_forward would launch for `params`."""
        index = ctypes.c_int(-1)
        _check(self._clib, self._clib.attn_select_variant(
            self._handle, ctypes.byref(params), ctypes.byref(index)))
        return self.variants[index.value]

    def forward(self, params):
        _check(self._clib,
               self._clib.attn_forward(self._handle, ctypes.byref(params)))

    # -- torch interface ----------------------------------------------------

    def _torch_params(self, q, k, v, o, lse, causal, scale, window, bias,
                      softcap):
        import torch

        names = {torch.float16: "f16", torch.bfloat16: "bf16",
                 torch.float32: "f32"}
        for name, t in (("q", q), ("k", k), ("v", v)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor")
            if not t.is_cuda:
                raise ValueError(f"{name} must be a CUDA tensor, got "
                                 f"{t.device}")
            if t.dim() != 4:
                raise ValueError(f"{name} must be 4-D [B, H, S, D], got shape "
                                 f"{tuple(t.shape)}")
            if t.dtype != q.dtype:
                raise TypeError(f"{name} is {t.dtype}, q is {q.dtype}")
            if t.device != q.device:
                raise ValueError(f"{name} is on {t.device}, q on {q.device}")
            if t.stride(3) != 1 and t.shape[3] > 1:
                raise ValueError(f"{name} must be contiguous in its last "
                                 f"dimension, strides {t.stride()}")
        if q.dtype not in names:
            raise TypeError(f"dtype {q.dtype} is not supported (float16, "
                            "bfloat16, float32)")
        B, Hq, Sq, D = q.shape
        Bk, Hkv, Sk, Dk = k.shape
        if (Bk, Dk) != (B, D) or tuple(v.shape[:3]) != (B, Hkv, Sk):
            raise ValueError(f"shapes do not match: q {tuple(q.shape)}, "
                             f"k {tuple(k.shape)}, v {tuple(v.shape)}")
        mask, left, right = resolve_mask(causal, window, Sq, Sk)
        bias_ptr, bias_kind, bias_strides = None, "none", (0, 0, 0, 0)
        if bias is not None:
            if not isinstance(bias, torch.Tensor) or not bias.is_cuda:
                raise TypeError("bias must be a CUDA torch.Tensor")
            if bias.dtype == q.dtype:
                bias_kind = "same"
            elif bias.dtype == torch.float32:
                bias_kind = "f32"
            else:
                raise TypeError(f"bias is {bias.dtype}; it must be {q.dtype} "
                                "or float32")
            bias_strides = broadcast_strides(bias.shape, bias.stride(),
                                             (B, Hq, Sq, Sk))
            bias_ptr = bias.data_ptr()

        def unit_last(t):
            s = list(t.stride())
            s[3] = 1  # a size-1 last dimension may report any stride
            return s

        stream = torch.cuda.current_stream(q.device).cuda_stream
        return self.make_params(
            q=(q.data_ptr(), unit_last(q)), k=(k.data_ptr(), unit_last(k)),
            v=(v.data_ptr(), unit_last(v)), o=(o.data_ptr(), unit_last(o)),
            dtype=names[q.dtype], shape_q=q.shape, shape_k=k.shape,
            shape_v=v.shape,
            lse=None if lse is None else lse.data_ptr(),
            lse_strides=(0, 0) if lse is None else lse.stride()[:2],
            bias=bias_ptr, bias_kind=bias_kind, bias_strides=bias_strides,
            mask=mask, window=(left, right), scale=scale, softcap=softcap,
            stream=stream)

    def select_variant(self, q, k, v, causal=False, scale=None, window=None,
                       bias=None, softcap=None, return_lse=False):
        """The variant attention() would launch (AttnError if none)."""
        import torch

        o = torch.empty((*q.shape[:3], v.shape[3]), dtype=q.dtype,
                        device=q.device)
        lse = (torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
               if return_lse else None)
        return self.select(self._torch_params(q, k, v, o, lse, causal, scale,
                                              window, bias, softcap))

    def attention(self, q, k, v, causal=False, scale=None, window=None,
                  bias=None, return_lse=False, softcap=None, out=None):
        """Attention of q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk,
        Dv]; returns (out [B, Hq, Sq, Dv], lse [B, Hq, Sq] float32 or None).
        `out`, when given, is written in place (any strides, unit last)."""
        import torch

        shape_o = (*q.shape[:3], v.shape[3]) if q.dim() == 4 else None
        if out is None:
            if shape_o is None:
                raise ValueError(f"q must be 4-D [B, H, S, D], got shape "
                                 f"{tuple(q.shape)}")
            out = torch.empty(shape_o, dtype=q.dtype, device=q.device)
        elif (tuple(out.shape) != tuple(shape_o) or out.dtype != q.dtype
              or out.device != q.device):
            raise ValueError(f"out must be {shape_o} {q.dtype} on {q.device}, "
                             f"got {tuple(out.shape)} {out.dtype}")
        lse = (torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
               if return_lse else None)
        params = self._torch_params(q, k, v, out, lse, causal, scale, window,
                                    bias, softcap)
        with torch.cuda.device(q.device):
            self.forward(params)
        return out, lse


def load(bundle_dir):
    """Loads the bundle in `bundle_dir` (bundle.json and its binaries)."""
    return Library(bundle_dir)
