"""Python binding of the attn runtime (runtime/include/attn_runtime.h).

    import attn_runtime
    lib = attn_runtime.load(bundle_dir)
    out, lse = lib.attention(q, k, v, causal=False, scale=None, window=None,
                             bias=None, return_lse=False)
    dq, dk, dv = lib.attention_backward(dout, q, k, v, out, lse, ...)
    keep = lib.dropout_mask(B, H, Sq, Sk, dropout_p, seed, offset)
    out, lse = lib.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                    max_seqlen_q, max_seqlen_k, ...)
    out, lse = lib.attention_kvcache(q, k_cache, v_cache, cache_seqlens,
                                     block_table=None, ...)

q, k, v are torch CUDA tensors laid out [B, H, S, D] (any strides with a unit
last-dim stride); the kernels run on torch's current stream. lse is None
unless return_lse. attention() is differentiable: when an input requires
grad, out.backward() runs the bundle's backward plans. Failures raise
AttnError carrying the runtime's status and message. The binding is ctypes
only, so it needs no compiler; torch is imported on first use so the module
loads (and is tested) without it.
"""

import ctypes
import math
import os
import struct
import threading

__all__ = ["AttnError", "Library", "PreparedCall", "load", "find_library",
           "API_VERSION", "dropout_mask", "philox4x32"]

API_VERSION = 5

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


def _fields(kind, *names):
    return [(name, kind) for name in names]


def _strides(*names, n=4):
    return [(f"{name}_stride", ctypes.c_int64 * n) for name in names]


_P, _I32 = ctypes.c_void_p, ctypes.c_int32
_DIMS = _fields(_I32, "batch", "heads_q", "heads_kv", "seqlen_q", "seqlen_k",
                "head_dim", "head_dim_v")
_TAIL = (_fields(ctypes.c_float, "scale", "softcap")
         + _fields(_I32, "window_left", "window_right")
         + _fields(_P, "stream"))
_DROPOUT = (_fields(ctypes.c_float, "dropout_p")
            + _fields(ctypes.c_uint32, "dropout_offset")
            + _fields(ctypes.c_uint64, "dropout_seed"))


class _FwdParams(ctypes.Structure):
    # Mirrors attn_fwd_params; the size is checked against the library's.
    _fields_ = (_fields(_P, "q", "k", "v", "o", "lse", "bias") + _DIMS
                + _fields(_I32, "dtype", "mask", "bias_kind")
                + _strides("q", "k", "v", "o") + _strides("lse", n=2)
                + _strides("bias") + _TAIL
                + _fields(_P, "cu_seqlens_q", "cu_seqlens_k", "seqlens_k",
                          "block_table")
                + _fields(ctypes.c_int64, "block_table_stride")
                + _fields(_I32, "page_size", "num_pages", "max_seqlen_q",
                          "num_splits")
                + _fields(_P, "workspace")
                + _fields(ctypes.c_size_t, "workspace_size") + _DROPOUT)


class _BwdParams(ctypes.Structure):
    # Mirrors attn_bwd_params; the size is checked against the library's.
    _fields_ = (_fields(_P, "q", "k", "v", "o", "dout", "lse", "bias", "dq",
                        "dk", "dv", "dbias", "workspace")
                + _fields(ctypes.c_size_t, "workspace_size") + _DIMS
                + _fields(_I32, "dtype", "mask", "bias_kind", "deterministic")
                + _strides("q", "k", "v", "o", "do", "dq", "dk", "dv")
                + _strides("lse", n=2) + _strides("bias", "dbias") + _TAIL
                + _DROPOUT)


# The runtime's workspace alignment (attn_bwd_params.workspace).
WORKSPACE_ALIGNMENT = 256

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
        # Checked first: an older library lacks the backward entry points.
        version = lib.attn_runtime_api_version()
        if version != API_VERSION:
            raise AttnError(STATUS["INVALID_ARGUMENT"],
                            f"{path} has API version {version}, this module "
                            f"was written for {API_VERSION}")
        lib.attn_bundle_force_variant.argtypes = [P, ctypes.c_char_p]
        lib.attn_bundle_force_variant.restype = ctypes.c_int
        bwd = ctypes.POINTER(_BwdParams)
        lib.attn_bwd_params_size.restype = ctypes.c_size_t
        lib.attn_bundle_plan_count.argtypes = [P]
        lib.attn_bundle_plan_count.restype = ctypes.c_int
        lib.attn_bundle_plan_name.argtypes = [P, ctypes.c_int]
        lib.attn_bundle_plan_name.restype = ctypes.c_char_p
        lib.attn_select_plan.argtypes = [P, bwd, ctypes.POINTER(ctypes.c_int)]
        lib.attn_select_plan.restype = ctypes.c_int
        lib.attn_backward_workspace_size.argtypes = [
            P, bwd, ctypes.POINTER(ctypes.c_size_t)]
        lib.attn_backward_workspace_size.restype = ctypes.c_int
        lib.attn_backward.argtypes = [P, bwd]
        lib.attn_backward.restype = ctypes.c_int
        lib.attn_forward_workspace_size.argtypes = [
            P, params, ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_size_t)]
        lib.attn_forward_workspace_size.restype = ctypes.c_int
        for name, struct, fn in (
                ("attn_fwd_params", _FwdParams, lib.attn_fwd_params_size),
                ("attn_bwd_params", _BwdParams, lib.attn_bwd_params_size)):
            size = fn()
            if size != ctypes.sizeof(struct):
                raise AttnError(STATUS["INVALID_ARGUMENT"],
                                f"{name} is {size} bytes in {path} but "
                                f"{ctypes.sizeof(struct)} here")
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


_MASK32 = 0xFFFFFFFF


def _mulhilo(a, b):
    """(high, low) 32-bit halves of a * b for a constant a < 2^32 and b
    (an int or an int64 torch tensor) below 2^32, in arithmetic that never
    exceeds 2^49 except where only the low bits are kept."""
    low16, high16 = b & 0xFFFF, b >> 16
    p1, p2 = a * low16, a * high16
    return (p2 + (p1 >> 16)) >> 16, (p1 + (p2 << 16)) & _MASK32


def philox4x32(counter, key):
    """The four words of Philox4x32-10 (Random123) for `counter` (four
    32-bit words) under `key` (two): Python ints or int64 torch tensors."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for rnd in range(10):
        if rnd:
            k0, k1 = (k0 + 0x9E3779B9) & _MASK32, (k1 + 0xBB67AE85) & _MASK32
        hi0, lo0 = _mulhilo(0xD2511F53, c0)
        hi1, lo1 = _mulhilo(0xCD9E8D57, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def _check_dropout(dropout_p, seed, offset, need_seed):
    """(p, seed, offset) checked; a missing seed is drawn from torch's
    default generator unless `need_seed` (a backward must be given the
    forward's)."""
    p = float(dropout_p or 0.0)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if not 0 <= int(offset) < 2 ** 32:
        raise ValueError(f"offset must be in [0, 2^32), got {offset}")
    if p == 0.0:
        return 0.0, 0, 0
    if seed is None:
        if need_seed:
            raise ValueError("dropout_p > 0 needs the seed (and offset) the "
                             "forward used")
        import torch
        seed = int(torch.randint(0, 2 ** 62, ()).item())
    if not 0 <= int(seed) < 2 ** 64:
        raise ValueError(f"seed must be in [0, 2^64), got {seed}")
    return p, int(seed), int(offset)


def dropout_threshold(dropout_p):
    """The word below which an element is dropped: floor(p * 2^32) with p
    rounded to float32, as the kernels compute it."""
    p32 = struct.unpack("f", struct.pack("f", float(dropout_p)))[0]
    return int(p32 * 4294967296.0)


def dropout_keep(b_h, i, j, dropout_p, seed, offset):
    """Whether element (query row i, key j) of batch-head b_h = b * Hq + h
    is kept: ints or int64 torch tensors (broadcast). The mask of
    docs/AttnDialect.md: i = 16a + 8x + r, j = 16c + 8y + s read word
    y + 2x of Philox4x32-10 counter (8c + s, 8a + r, b_h, offset) keyed by
    the seed's two halves, and keep when it is at least the threshold."""
    words = philox4x32(
        (((j >> 4) << 3) | (j & 7), ((i >> 4) << 3) | (i & 7),
         b_h & _MASK32, offset & _MASK32),
        (seed & _MASK32, (seed >> 32) & _MASK32))
    x, y = (i >> 3) & 1, (j >> 3) & 1
    pick = lambda a, b: a * (1 - y) + b * y  # noqa: E731 (ints or tensors)
    word = pick(words[0], words[1]) * (1 - x) + pick(words[2], words[3]) * x
    return word >= dropout_threshold(dropout_p)


def dropout_mask(B, H, Sq, Sk, dropout_p, seed, offset=0, device="cpu"):
    """The boolean keep-mask [B, H, Sq, Sk] (torch) that attention() with
    this dropout_p, seed and offset uses: True where a probability is kept
    (and scaled by 1 / (1 - dropout_p))."""
    import torch

    p, seed, offset = _check_dropout(dropout_p, seed, offset, True)
    if p == 0.0:
        return torch.ones((B, H, Sq, Sk), dtype=torch.bool, device=device)

    def ar(n, shape):
        return torch.arange(n, dtype=torch.int64, device=device).view(shape)

    b_h = ar(B * H, (B, H, 1, 1))
    return dropout_keep(b_h, ar(Sq, (1, 1, Sq, 1)), ar(Sk, (1, 1, 1, Sk)),
                        p, seed, offset).expand(B, H, Sq, Sk).contiguous()


def _fill_common(p, *, q, k, v, o, dtype, shape_q, shape_k, shape_v, lse,
                 lse_strides, bias, bias_kind, bias_strides, mask, window,
                 scale, softcap, stream, dropout=(0.0, 0, 0)):
    """The fields attn_fwd_params and attn_bwd_params share."""
    B, Hq, Sq, D = shape_q
    _, Hkv, Sk, _ = shape_k
    Dv = shape_v[3]
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
    p.dropout_p, p.dropout_seed, p.dropout_offset = dropout
    return p


class Library:
    """A loaded bundle. Thread-safe; modules are loaded on first launch.

    `poison_outputs` (default False), a testing aid: when set, the gradients
    attention_backward allocates (and attention's output) are filled with
    NaN before the launch, so that an element a kernel skips shows."""

    def __init__(self, bundle_dir):
        self._clib = _library()
        handle = ctypes.c_void_p()
        _check(self._clib,
               self._clib.attn_bundle_load(os.fsencode(bundle_dir),
                                           ctypes.byref(handle)))
        self._handle = handle
        self.bundle_dir = bundle_dir
        self.poison_outputs = False
        self.platform = ("cuda", "hip")[
            self._clib.attn_bundle_platform(handle)]
        self.chip = self._clib.attn_bundle_chip(handle).decode()
        self.variants = [
            self._clib.attn_bundle_variant_name(handle, i).decode()
            for i in range(self._clib.attn_bundle_variant_count(handle))]
        self.plans = [
            self._clib.attn_bundle_plan_name(handle, i).decode()
            for i in range(self._clib.attn_bundle_plan_count(handle))]

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
        plans = f", {len(self.plans)} plans" if self.plans else ""
        return (f"<attn_runtime.Library {self.bundle_dir!r} {self.platform} "
                f"{self.chip}, {len(self.variants)} variants{plans}>")

    # -- torch-free core, also used by the tests ----------------------------

    def make_params(self, *, q, k, v, o, dtype, shape_q, shape_k, shape_v,
                    lse=None, lse_strides=(0, 0), bias=None,
                    bias_kind="none", bias_strides=(0, 0, 0, 0),
                    mask="none", window=(-1, -1), scale=None, softcap=0.0,
                    stream=0, dropout=(0.0, 0, 0)):
        """attn_fwd_params from plain values: q, k, v, o (and lse, bias) are
        (device pointer, strides) pairs, shapes are 4-D; dropout is (p, seed,
        offset)."""
        return _fill_common(
            _FwdParams(), q=q, k=k, v=v, o=o, dtype=dtype, shape_q=shape_q,
            shape_k=shape_k, shape_v=shape_v, lse=lse,
            lse_strides=lse_strides, bias=bias, bias_kind=bias_kind,
            bias_strides=bias_strides, mask=mask, window=window, scale=scale,
            softcap=softcap, stream=stream, dropout=dropout)

    def make_bwd_params(self, *, q, k, v, o, dout, dq, dk, dv, lse, dtype,
                        shape_q, shape_k, shape_v, bias=None,
                        bias_kind="none", bias_strides=(0, 0, 0, 0),
                        dbias=None, mask="none", window=(-1, -1), scale=None,
                        softcap=0.0, deterministic=False, workspace=None,
                        workspace_size=0, stream=0, dropout=(0.0, 0, 0)):
        """attn_bwd_params from plain values: q, k, v, o, dout, dq, dk, dv
        and dbias are (device pointer, strides) pairs, lse is (pointer,
        (stride_b, stride_h)), bias a pointer."""
        p = _fill_common(
            _BwdParams(), q=q, k=k, v=v, o=o, dtype=dtype, shape_q=shape_q,
            shape_k=shape_k, shape_v=shape_v, lse=lse[0],
            lse_strides=lse[1], bias=bias, bias_kind=bias_kind,
            bias_strides=bias_strides, mask=mask, window=window, scale=scale,
            softcap=softcap, stream=stream, dropout=dropout)
        p.dout, p.do_stride[:] = dout[0], dout[1]
        p.dq, p.dq_stride[:] = dq[0], dq[1]
        p.dk, p.dk_stride[:] = dk[0], dk[1]
        p.dv, p.dv_stride[:] = dv[0], dv[1]
        if dbias is not None:
            p.dbias, p.dbias_stride[:] = dbias[0], dbias[1]
        p.deterministic = int(bool(deterministic))
        p.workspace = workspace
        p.workspace_size = workspace_size
        return p

    def select(self, params):
        """Name of the variant attn_forward would launch for `params`."""
        index = ctypes.c_int(-1)
        _check(self._clib, self._clib.attn_select_variant(
            self._handle, ctypes.byref(params), ctypes.byref(index)))
        return self.variants[index.value]

    def force_variant(self, name):
        """Every later forward call uses variant `name` (None restores the
        normal dispatch); a call it does not match raises AttnError
        (NO_VARIANT) instead of launching another kernel. The environment
        variable ATTN_FORCE_VARIANT does the same for every bundle loaded."""
        _check(self._clib, self._clib.attn_bundle_force_variant(
            self._handle, name.encode() if name else None))

    def forward_workspace(self, params):
        """(splits, workspace bytes) attn_forward would use for `params`
        (split-KV of a KV-cache call; (1, 0) otherwise)."""
        splits, size = ctypes.c_int(1), ctypes.c_size_t(0)
        _check(self._clib, self._clib.attn_forward_workspace_size(
            self._handle, ctypes.byref(params), ctypes.byref(splits),
            ctypes.byref(size)))
        return splits.value, size.value

    def forward(self, params):
        _check(self._clib,
               self._clib.attn_forward(self._handle, ctypes.byref(params)))

    def select_plan(self, params):
        """Name of the plan attn_backward would launch for `params`."""
        index = ctypes.c_int(-1)
        _check(self._clib, self._clib.attn_select_plan(
            self._handle, ctypes.byref(params), ctypes.byref(index)))
        return self.plans[index.value]

    def workspace_size(self, params):
        """Bytes of workspace attn_backward needs for `params`."""
        size = ctypes.c_size_t(0)
        _check(self._clib, self._clib.attn_backward_workspace_size(
            self._handle, ctypes.byref(params), ctypes.byref(size)))
        return size.value

    def backward(self, params):
        _check(self._clib,
               self._clib.attn_backward(self._handle, ctypes.byref(params)))

    # -- torch interface ----------------------------------------------------

    @staticmethod
    def _check_tensors(q, k, v, named):
        """Checks q, k, v and the further (name, tensor) pairs of a call:
        CUDA, 4-D, q's dtype and device, unit last stride. Returns the
        runtime's dtype name."""
        import torch

        names = {torch.float16: "f16", torch.bfloat16: "bf16",
                 torch.float32: "f32"}
        for name, t in (("q", q), ("k", k), ("v", v), *named):
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
        B, _, _, D = q.shape
        Bk, Hkv, Sk, Dk = k.shape
        if (Bk, Dk) != (B, D) or tuple(v.shape[:3]) != (B, Hkv, Sk):
            raise ValueError(f"shapes do not match: q {tuple(q.shape)}, "
                             f"k {tuple(k.shape)}, v {tuple(v.shape)}")
        return names[q.dtype]

    @staticmethod
    def _bias_args(bias, q, target):
        """(pointer, bias kind, strides broadcast to `target`) of a bias."""
        import torch

        if bias is None:
            return None, "none", (0, 0, 0, 0)
        if not isinstance(bias, torch.Tensor) or not bias.is_cuda:
            raise TypeError("bias must be a CUDA torch.Tensor")
        if bias.dtype == q.dtype:
            kind = "same"
        elif bias.dtype == torch.float32:
            kind = "f32"
        else:
            raise TypeError(f"bias is {bias.dtype}; it must be {q.dtype} or "
                            "float32")
        return (bias.data_ptr(), kind,
                broadcast_strides(bias.shape, bias.stride(), target))

    @staticmethod
    def _ptr(t):
        """(pointer, strides) of a 4-D tensor for make_params."""
        s = list(t.stride())
        s[3] = 1  # a size-1 last dimension may report any stride
        return t.data_ptr(), s

    def _torch_params(self, q, k, v, o, lse, causal, scale, window, bias,
                      softcap, dropout=(0.0, 0, 0)):
        import torch

        dtype = self._check_tensors(q, k, v, ())
        B, Hq, Sq, _ = q.shape
        Sk = k.shape[2]
        mask, left, right = resolve_mask(causal, window, Sq, Sk)
        bias_ptr, bias_kind, bias_strides = self._bias_args(
            bias, q, (B, Hq, Sq, Sk))
        stream = torch.cuda.current_stream(q.device).cuda_stream
        return self.make_params(
            q=self._ptr(q), k=self._ptr(k), v=self._ptr(v), o=self._ptr(o),
            dtype=dtype, shape_q=q.shape, shape_k=k.shape, shape_v=v.shape,
            lse=None if lse is None else lse.data_ptr(),
            lse_strides=(0, 0) if lse is None else lse.stride()[:2],
            bias=bias_ptr, bias_kind=bias_kind, bias_strides=bias_strides,
            mask=mask, window=(left, right), scale=scale, softcap=softcap,
            stream=stream, dropout=dropout)

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
                  bias=None, return_lse=False, softcap=None, out=None,
                  dropout_p=0.0, seed=None, offset=0):
        """Attention of q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk,
        Dv]; returns (out [B, Hq, Sq, Dv], lse [B, Hq, Sq] float32 or None).
        `out`, when given, is written in place (any strides, unit last).

        dropout_p > 0 drops each probability with that probability (and
        scales the kept ones by 1 / (1 - dropout_p)) by the counter-based
        mask dropout_mask(B, Hq, Sq, Sk, dropout_p, seed, offset) gives;
        seed None draws one from torch's generator. lse is that of the
        scores before dropout.

        Differentiable: when grad mode is on and q, k, v or bias requires
        grad, out.backward() fills their .grad through the bundle's backward
        plans (deterministic ones when torch.use_deterministic_algorithms is
        on), with the same dropout mask. The returned lse is not
        differentiable."""
        import torch

        dropout = _check_dropout(dropout_p, seed, offset, False)
        if torch.is_grad_enabled() and any(
                isinstance(t, torch.Tensor) and t.requires_grad
                for t in (q, k, v, bias)):
            if out is not None:
                raise RuntimeError("attention(): out= does not support "
                                   "automatic differentiation (an input "
                                   "requires grad)")
            o, lse = _attention_function().apply(self, q, k, v, bias, causal,
                                                 scale, window, softcap,
                                                 dropout)
            return o, (lse if return_lse else None)
        return self._forward(q, k, v, causal, scale, window, bias, return_lse,
                             softcap, out, dropout)

    def _forward(self, q, k, v, causal, scale, window, bias, return_lse,
                 softcap, out, dropout=(0.0, 0, 0)):
        import torch

        shape_o = (*q.shape[:3], v.shape[3]) if q.dim() == 4 else None
        if out is None:
            if shape_o is None:
                raise ValueError(f"q must be 4-D [B, H, S, D], got shape "
                                 f"{tuple(q.shape)}")
            out = self._empty(shape_o, q.dtype, q.device)
        elif (tuple(out.shape) != tuple(shape_o) or out.dtype != q.dtype
              or out.device != q.device):
            raise ValueError(f"out must be {shape_o} {q.dtype} on {q.device}, "
                             f"got {tuple(out.shape)} {out.dtype}")
        lse = (torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
               if return_lse else None)
        params = self._torch_params(q, k, v, out, lse, causal, scale, window,
                                    bias, softcap, dropout)
        with torch.cuda.device(q.device):
            self.forward(params)
        return out, lse

    @staticmethod
    def dropout_mask(B, H, Sq, Sk, dropout_p, seed, offset=0, device="cpu"):
        """The keep-mask a call with these dropout values uses (the module's
        dropout_mask)."""
        return dropout_mask(B, H, Sq, Sk, dropout_p, seed, offset, device)

    # -- serving forms ---------------------------------------------------

    @staticmethod
    def _index_tensor(name, t, device, dims):
        """Checks an int32 CUDA index tensor of `dims` dimensions with a
        unit last stride; returns it."""
        import torch

        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor")
        if t.dtype != torch.int32:
            raise TypeError(f"{name} must be int32, got {t.dtype}")
        if t.device != device:
            raise ValueError(f"{name} is on {t.device}, q on {device}")
        if t.dim() != dims:
            raise ValueError(f"{name} must be {dims}-D, got shape "
                             f"{tuple(t.shape)}")
        if t.numel() > 1 and t.stride(-1) != 1:
            raise ValueError(f"{name} must be contiguous in its last "
                             f"dimension, strides {t.stride()}")
        return t

    def attention_varlen(self, q, k, v, cu_seqlens_q, cu_seqlens_k,
                         max_seqlen_q, max_seqlen_k, causal=False, scale=None,
                         window=None, softcap=None, return_lse=False):
        """Attention over a packed batch of sequences of different lengths:
        q [total_q, Hq, D], k [total_k, Hkv, D], v [total_k, Hkv, Dv] (any
        strides, unit last stride); sequence i owns rows cu_seqlens_q[i] to
        cu_seqlens_q[i + 1] of q (int32 [B + 1], non-decreasing) and
        likewise of k and v. max_seqlen_q sizes the grid (below the
        longest query length it is still correct, only slower). Masks apply
        per sequence (causal=True top-left,
        "bottom_right"). Returns (out [total_q, Hq, Dv], lse [Hq, total_q]
        float32 or None). Rows no sequence owns are not written."""
        import torch

        for name, t in (("q", q), ("k", k), ("v", v)):
            if not isinstance(t, torch.Tensor) or t.dim() != 3:
                raise ValueError(f"{name} must be a 3-D torch.Tensor "
                                 f"[total, H, D]")
        cu_q = self._index_tensor("cu_seqlens_q", cu_seqlens_q, q.device, 1)
        cu_k = self._index_tensor("cu_seqlens_k", cu_seqlens_k, q.device, 1)
        if cu_q.shape[0] != cu_k.shape[0] or cu_q.shape[0] < 1:
            raise ValueError(f"cu_seqlens_q and cu_seqlens_k must both have "
                             f"B + 1 >= 1 entries, got {cu_q.shape[0]} and "
                             f"{cu_k.shape[0]}")
        max_seqlen_q, max_seqlen_k = int(max_seqlen_q), int(max_seqlen_k)
        if max_seqlen_q < 0 or max_seqlen_k < 0:
            raise ValueError("max_seqlen_q and max_seqlen_k must be >= 0")
        total_q, Hq, _ = q.shape
        total_k = k.shape[0]
        batch = cu_q.shape[0] - 1
        # [total, H, D] viewed as the op's [1, H, total, D].
        q4, k4, v4 = (t.permute(1, 0, 2).unsqueeze(0) for t in (q, k, v))
        out = self._empty((total_q, Hq, v.shape[2]), q.dtype, q.device)
        lse = (torch.empty((Hq, total_q), dtype=torch.float32,
                           device=q.device) if return_lse else None)
        if batch == 0 or total_q == 0 or max_seqlen_q == 0:
            return out, lse
        if total_k == 0:
            _no_keys(out, lse)
            return out, lse
        if window is not None and causal in (True, "top_left") and \
                not torch.equal(cu_q, cu_k):
            raise ValueError("a window with top-left causal masking needs "
                             "equal query and key lengths in every "
                             "sequence; use causal='bottom_right'")
        # Per sequence, top-left and bottom-right agree when the lengths do;
        # the check above made them equal where it matters.
        mask, left, right = resolve_mask(causal, window, 1, 1)
        params = self._torch_params(
            q4, k4, v4, out.permute(1, 0, 2).unsqueeze(0),
            None if lse is None else lse.unsqueeze(0), False, scale, None,
            None, softcap)
        params.mask = MASKS[mask]
        params.window_left, params.window_right = left, right
        params.seqlen_q, params.seqlen_k = total_q, max(total_k, 1)
        params.batch = batch
        params.cu_seqlens_q, params.cu_seqlens_k = \
            cu_q.data_ptr(), cu_k.data_ptr()
        params.max_seqlen_q = min(max_seqlen_q, total_q)
        with torch.cuda.device(q.device):
            self.forward(params)
        return out, lse

    def attention_kvcache(self, q, k_cache, v_cache, cache_seqlens,
                          block_table=None, causal=False, scale=None,
                          window=None, softcap=None, return_lse=False,
                          num_splits=0):
        """Attention of q [B, Hq, Sq, D] over a KV cache: batch b uses its
        first cache_seqlens[b] keys (int32 [B]). Without block_table,
        k_cache and v_cache are [B, Hkv, S_max, D]; with block_table (int32
        [B, max_pages]) they are pages [num_pages, Hkv, page_size, D] and
        key j of batch b is row j % page_size of page block_table[b, j //
        page_size]. Masks align to each batch's key count (causal=True
        top-left, "bottom_right"). num_splits: how many workgroups share
        each batch's keys (split-KV; their partial results are merged by a
        second kernel): 0 lets the runtime choose from the shape and the
        GPU, 1 never splits. Returns (out [B, Hq, Sq, Dv], lse [B, Hq, Sq]
        float32 or None)."""
        import torch

        # One device scope for planning and launch (each costs microseconds
        # on a decode step).
        with torch.cuda.device(q.device):
            call = self._prepare_kvcache(
                q, k_cache, v_cache, cache_seqlens, block_table, causal,
                scale, window, softcap, return_lse, num_splits)
            if call._params is not None:
                self.forward(call._params)
        return call.out, call.lse

    def prepare_kvcache(self, q, k_cache, v_cache, cache_seqlens,
                        block_table=None, causal=False, scale=None,
                        window=None, softcap=None, return_lse=False,
                        num_splits=0):
        """attention_kvcache's checks, outputs and workspace, bound once:
        returns a PreparedCall whose run() launches the kernels on the
        current stream (again and again, e.g. under a CUDA graph capture or
        a benchmark loop: the tensors' contents may change between runs,
        not their shapes or addresses) and whose .out and .lse hold the
        results."""
        import torch

        with torch.cuda.device(q.device):
            return self._prepare_kvcache(
                q, k_cache, v_cache, cache_seqlens, block_table, causal,
                scale, window, softcap, return_lse, num_splits)

    def _prepare_kvcache(self, q, k_cache, v_cache, cache_seqlens,
                         block_table, causal, scale, window, softcap,
                         return_lse, num_splits):
        """prepare_kvcache inside the caller's device scope."""
        import torch

        if not isinstance(num_splits, int) or num_splits < 0:
            raise ValueError(f"num_splits must be an int >= 0, got "
                             f"{num_splits!r}")
        if q.dim() != 4 or k_cache.dim() != 4 or v_cache.dim() != 4:
            raise ValueError("q, k_cache and v_cache must be 4-D")
        B, Hq, Sq, _ = q.shape
        lens = self._index_tensor("cache_seqlens", cache_seqlens, q.device, 1)
        if lens.shape[0] != B:
            raise ValueError(f"cache_seqlens must have B = {B} entries, got "
                             f"{lens.shape[0]}")
        table = None
        if block_table is not None:
            table = self._index_tensor("block_table", block_table, q.device,
                                       2)
            if table.shape[0] != B or table.shape[1] < 1:
                raise ValueError(f"block_table must be [B = {B}, max_pages "
                                 f">= 1], got {tuple(table.shape)}")
            num_pages, _, page_size, _ = k_cache.shape
            if tuple(v_cache.shape[:3]) != tuple(k_cache.shape[:3]):
                raise ValueError(f"k_cache {tuple(k_cache.shape)} and v_cache "
                                 f"{tuple(v_cache.shape)} differ in pages")
            if num_pages == 0 or page_size == 0:
                raise ValueError(f"k_cache {tuple(k_cache.shape)} holds no "
                                 f"pages")
            capacity = table.shape[1] * page_size
            # The tensor checks want k's batch to be q's: they see one page
            # per batch; the page stride is set below.
            kc = k_cache[:1].expand(B, -1, -1, -1)
            vc = v_cache[:1].expand(B, -1, -1, -1)
        else:
            kc, vc = k_cache, v_cache
            capacity = k_cache.shape[2]
        # Top-left and bottom-right alignment differ unless Sq equals each
        # batch's key count, which only the device knows.
        if window is not None and causal in (True, "top_left"):
            raise ValueError("a window with top-left causal masking needs "
                             "seqlen_q == seqlen_k in every batch; use "
                             "causal='bottom_right'")
        mask, left, right = resolve_mask(causal, window, 1, 1)
        out = self._empty((B, Hq, Sq, v_cache.shape[3]), q.dtype, q.device)
        lse = (torch.empty((B, Hq, Sq), dtype=torch.float32, device=q.device)
               if return_lse else None)
        if B == 0 or Sq == 0:
            return PreparedCall(self, None, out, lse)
        params = self._torch_params(q, kc, vc, out, lse, False, scale, None,
                                    None, softcap)
        if capacity == 0:
            _no_keys(out, lse)
            return PreparedCall(self, None, out, lse)
        params.mask = MASKS[mask]
        params.window_left, params.window_right = left, right
        params.seqlens_k = lens.data_ptr()
        params.seqlen_k = max(capacity, 1)
        if table is not None:
            params.k_stride[0] = k_cache.stride(0)
            params.v_stride[0] = v_cache.stride(0)
            params.block_table = table.data_ptr()
            params.block_table_stride = table.stride(0)
            params.page_size = page_size
            params.num_pages = num_pages
        params.num_splits = num_splits
        splits, size = self.forward_workspace(params)
        workspace = _attach_workspace(params, size, q.device)
        # The split count is fixed now: later runs need no SM-count query.
        params.num_splits = splits
        return PreparedCall(self, params, out, lse, workspace, q.device)

    def _empty(self, shape, dtype, device):
        import torch

        if self.poison_outputs:
            return torch.full(shape, float("nan"), dtype=dtype, device=device)
        return torch.empty(shape, dtype=dtype, device=device)

    def _torch_bwd_params(self, dout, q, k, v, out, lse, causal, scale,
                          window, bias, softcap, deterministic, bias_grad,
                          dropout=(0.0, 0, 0)):
        """attn_bwd_params for torch tensors, the gradients allocated; also
        returns (dq, dk, dv, dbias or None)."""
        import torch

        dtype = self._check_tensors(q, k, v, (("out", out), ("dout", dout)))
        B, Hq, Sq, _ = q.shape
        Sk, Dv = k.shape[2], v.shape[3]
        for name, t in (("out", out), ("dout", dout)):
            if tuple(t.shape) != (B, Hq, Sq, Dv):
                raise ValueError(f"{name} must have shape {(B, Hq, Sq, Dv)}, "
                                 f"got {tuple(t.shape)}")
        if (not isinstance(lse, torch.Tensor) or lse.dtype != torch.float32
                or tuple(lse.shape) != (B, Hq, Sq) or lse.device != q.device
                or (Sq > 1 and lse.stride(2) != 1)):
            raise ValueError(f"lse must be the forward's float32 logsumexp "
                             f"of shape {(B, Hq, Sq)} on {q.device} with unit "
                             f"last stride")
        mask, left, right = resolve_mask(causal, window, Sq, Sk)
        target = (B, Hq, Sq, Sk)
        bias_ptr, bias_kind, bias_strides = self._bias_args(bias, q, target)
        dq = self._empty(q.shape, q.dtype, q.device)
        dk = self._empty(k.shape, q.dtype, q.device)
        dv = self._empty(v.shape, q.dtype, q.device)
        dbias = None
        if bias_grad:
            # The bias's own shape: the kernels sum over its broadcast
            # dimensions (stride 0) into it.
            dbias = self._empty(bias.shape, bias.dtype, bias.device)
        stream = torch.cuda.current_stream(q.device).cuda_stream
        params = self.make_bwd_params(
            q=self._ptr(q), k=self._ptr(k), v=self._ptr(v),
            o=self._ptr(out), dout=self._ptr(dout), dq=self._ptr(dq),
            dk=self._ptr(dk), dv=self._ptr(dv),
            lse=(lse.data_ptr(), lse.stride()[:2]), dtype=dtype,
            shape_q=q.shape, shape_k=k.shape, shape_v=v.shape, bias=bias_ptr,
            bias_kind=bias_kind, bias_strides=bias_strides,
            dbias=None if dbias is None else (
                dbias.data_ptr(),
                broadcast_strides(dbias.shape, dbias.stride(), target)),
            mask=mask, window=(left, right), scale=scale, softcap=softcap,
            deterministic=deterministic, stream=stream, dropout=dropout)
        return params, (dq, dk, dv, dbias)

    def backward_plan(self, q, k, v, causal=False, scale=None, window=None,
                      bias=None, softcap=None, deterministic=False,
                      bias_grad=None):
        """The plan attention_backward would launch (AttnError if none).
        bias_grad defaults to bias.requires_grad."""
        import torch

        if bias_grad is None:
            bias_grad = bias is not None and bias.requires_grad
        o = torch.empty((*q.shape[:3], v.shape[3]), dtype=q.dtype,
                        device=q.device)
        lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
        params, _ = self._torch_bwd_params(o, q, k, v, o.clone(), lse, causal,
                                           scale, window, bias, softcap,
                                           deterministic, bias_grad)
        return self.select_plan(params)

    def attention_backward(self, dout, q, k, v, out, lse, causal=False,
                           scale=None, window=None, bias=None, softcap=None,
                           deterministic=False, dropout_p=0.0, seed=None,
                           offset=0):
        """Gradients of attention(q, k, v, ...) for the gradient `dout` of
        its output `out`, given the forward's `lse` (return_lse=True).
        Returns (dq, dk, dv), and dbias (bias's shape and dtype, summed over
        its broadcast dimensions) when bias requires grad. Same conventions
        as attention(). deterministic=True takes only bit-reproducible
        plans. With dropout_p > 0, seed and offset must be the forward's. The
        workspace comes from torch's allocator; everything runs on torch's
        current stream."""
        bias_grad = bias is not None and bias.requires_grad
        dropout = _check_dropout(dropout_p, seed, offset, True)
        dq, dk, dv, dbias = self._backward(
            dout, q, k, v, out, lse, causal, scale, window, bias, softcap,
            deterministic, bias_grad, dropout)
        return (dq, dk, dv, dbias) if bias_grad else (dq, dk, dv)

    def _backward(self, dout, q, k, v, out, lse, causal, scale, window, bias,
                  softcap, deterministic, bias_grad, dropout=(0.0, 0, 0)):
        import torch

        params, grads = self._torch_bwd_params(
            dout, q, k, v, out, lse, causal, scale, window, bias, softcap,
            deterministic, bias_grad, dropout)
        workspace = _attach_workspace(params, self.workspace_size(params),
                                      q.device)
        with torch.cuda.device(q.device):
            self.backward(params)
        # Freed now; the caching allocator hands its memory out again only
        # in order on this stream, after the kernels.
        del workspace
        return grads


def _no_keys(out, lse):
    """The result of a call in which no query row sees a key, as the op
    defines it: zeros, and lse = -inf."""
    out.zero_()
    if lse is not None:
        lse.fill_(float("-inf"))


def _attach_workspace(params, size, device):
    """A torch buffer of `size` workspace bytes on `device` (None for 0),
    its aligned address and size set in `params`. Keep the tensor until the
    kernels are queued: torch's caching allocator then hands its memory out
    again only in stream order."""
    if not size:
        return None
    import torch

    # The allocator aligns to 512 bytes; the slack keeps this right
    # whatever it does.
    workspace = torch.empty(size + WORKSPACE_ALIGNMENT, dtype=torch.uint8,
                            device=device)
    ptr = workspace.data_ptr()
    params.workspace = ptr + (-ptr) % WORKSPACE_ALIGNMENT
    params.workspace_size = size
    return workspace


class PreparedCall:
    """A forward call with its tensors, outputs and workspace bound
    (Library.prepare_kvcache): run() launches it on the current stream."""

    def __init__(self, lib, params, out, lse, workspace=None, device=None):
        self._lib, self._params = lib, params
        self.out, self.lse = out, lse
        # Kept alive with the call: the kernels write into it.
        self._workspace, self._device = workspace, device

    def run(self):
        if self._params is None:
            return
        import torch

        with torch.cuda.device(self._device):
            self._params.stream = torch.cuda.current_stream(
                self._device).cuda_stream
            self._lib.forward(self._params)


_ATTENTION_FUNCTION = []


def _attention_function():
    """The torch.autograd.Function of attention(), made on first use so
    that this module imports without torch."""
    if _ATTENTION_FUNCTION:
        return _ATTENTION_FUNCTION[0]
    import torch
    from torch.autograd.function import once_differentiable

    class AttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, lib, q, k, v, bias, causal, scale, window, softcap,
                    dropout):
            out, lse = lib._forward(q, k, v, causal, scale, window, bias,
                                    True, softcap, None, dropout)
            ctx.lib = lib
            ctx.args = (causal, scale, window, softcap, dropout)
            ctx.save_for_backward(q, k, v, bias, out, lse)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        @once_differentiable
        def backward(ctx, dout, _dlse):
            q, k, v, bias, out, lse = ctx.saved_tensors
            causal, scale, window, softcap, dropout = ctx.args
            # Autograd hands any layout (an expanded ones tensor from a sum,
            # a transposed view); the plans want unit last strides and
            # aligned rows.
            if not dout.is_contiguous() or dout.data_ptr() % 16:
                dout = dout.contiguous() if not dout.is_contiguous() \
                    else dout.clone()
            bias_grad = bias is not None and ctx.needs_input_grad[4]
            dq, dk, dv, dbias = ctx.lib._backward(
                dout, q, k, v, out, lse, causal, scale, window, bias,
                softcap, torch.are_deterministic_algorithms_enabled(),
                bias_grad, dropout)
            need = ctx.needs_input_grad
            return (None, dq if need[1] else None, dk if need[2] else None,
                    dv if need[3] else None, dbias, None, None, None, None,
                    None)

    _ATTENTION_FUNCTION.append(AttentionFunction)
    return AttentionFunction


def load(bundle_dir):
    """Loads the bundle in `bundle_dir` (bundle.json and its binaries)."""
    return Library(bundle_dir)
