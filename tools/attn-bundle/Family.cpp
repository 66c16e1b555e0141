//===- Family.cpp - the kernel family attn-bundle compiles ------*- C++ -*-===//
//
// Like xformers' generate_kernels.py: every (dtype, head dim, mask, bias,
// softcap) asked for, each with the tiles the tables pick for it. The tiles
// come from enumerateFamily (the aligned and the dynamic-length pick of
// attn-select-config); whether a combination can be compiled at all is the
// verdict of evaluateCandidates on its dynamic-length problem, the problem
// the bundle's kernels serve.
//
//===----------------------------------------------------------------------===//

#include "Family.h"
#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Target/Constraints.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

std::optional<BiasKind> attn::parseBiasKind(StringRef name) {
  return llvm::StringSwitch<std::optional<BiasKind>>(name)
      .Case("none", BiasKind::None)
      .Case("same", BiasKind::Same)
      .Case("f32", BiasKind::F32)
      .Default(std::nullopt);
}

StringRef attn::stringifyBiasKind(BiasKind kind) {
  switch (kind) {
  case BiasKind::None:
    return "none";
  case BiasKind::Same:
    return "same";
  case BiasKind::F32:
    return "f32";
  }
  llvm_unreachable("unknown bias kind");
}

std::string Variant::describe() const {
  std::string d =
      headDim ? std::to_string(headDim) : "any<=" + std::to_string(maxHeadDim);
  if (headDimV)
    d += " Dv=" + std::to_string(headDimV);
  if (seqlenMin)
    d += " S=" + std::to_string(seqlenMin) + ".." +
         (seqlenMax ? std::to_string(seqlenMax) : std::string());
  if (minBlocksPerSm)
    d += " fill>=" + std::to_string(minBlocksPerSm);
  if (seqlenQMax)
    d += " Sq<=" + std::to_string(seqlenQMax);
  return llvm::formatv("{0}{1} D={2} mask={3} bias={4}{5}{6}{7}{8}",
                       direction == Direction::Backward ? "backward " : "",
                       stringifyElementType(dtype).lower(), d,
                       stringifyMaskKind(mask), stringifyBiasKind(bias),
                       softcap ? " softcap" : "",
                       alignBytes != 16 ? " align=" + Twine(alignBytes).str()
                                        : std::string(),
                       layout != SeqLayout::Dense
                           ? " layout=" + stringifySeqLayout(layout).str()
                           : std::string(),
                       std::string(biasGrad ? " bias_grad" : "") +
                           (deterministic ? " deterministic" : "") +
                           (dropout ? " dropout" : ""))
      .str();
}

/// What tells two tiles' kernels apart: what the kernel name spells
/// (getKernelName: block_m, block_n, warps, stages, and `ws` or `tma` for
/// the warp-specialized pipelines). Aligned twins (and a tile several
/// head-dim buckets accept) are one kernel, and so are two instructions'
/// tiles of one shape (mma.sync's and wgmma's m128n64w8 with
/// --all-candidates): their binaries would share a file, so the first, in
/// priority order, is kept.
static auto getKernelKey(const TileCandidate *c) {
  int suffix = c->pipeline == PipelineKind::TmaWarpSpecialized       ? 2
               : c->pipeline == PipelineKind::CpAsyncWarpSpecialized ? 1
                                                                     : 0;
  return std::make_tuple(c->blockM, c->blockN, c->warps, c->stages, suffix);
}

static AttentionProblem getProblem(const Variant &v);

/// The tiles of one combination, best first, one per kernel; empty when
/// `verdicts` (those of its dynamic-length problem) accept nothing.
static SmallVector<const TileCandidate *> getTiles(const FamilyRequest &request,
                                                   const Variant &v,
                                                   ArrayRef<Verdict> verdicts) {
  SmallVector<const TileCandidate *> candidates;
  if (request.allCandidates) {
    // Every candidate accepted for dynamic sequence lengths, in priority
    // order (the first stays the runtime's choice).
    for (const Verdict &verdict : verdicts)
      if (verdict.accepted)
        candidates.push_back(verdict.candidate);
  } else if (v.headDimV) {
    // The family's members are of D = Dv: a pair gets the tables' pick.
    if (const TileCandidate *c =
            selectCandidate(*request.chip, getProblem(v), request.profile))
      candidates.push_back(c);
  } else if (llvm::any_of(verdicts,
                          [](const Verdict &x) { return x.accepted; })) {
    for (const FamilyMember &m :
         enumerateFamily(*request.chip, request.profile->name,
                         {v.headDim ? v.headDim : v.maxHeadDim}, {v.mask}))
      if (m.direction == Direction::Forward && m.elementType == v.dtype)
        candidates.push_back(m.candidate);
  }
  SmallVector<const TileCandidate *> tiles;
  SmallVector<decltype(getKernelKey(nullptr))> kernels;
  for (const TileCandidate *c : candidates) {
    if (llvm::is_contained(kernels, getKernelKey(c)))
      continue;
    kernels.push_back(getKernelKey(c));
    tiles.push_back(c);
  }
  return tiles;
}

/// What contiguous rows of the variant's tensors keep (getRowAlignBytes of
/// D, and of Dv where it differs).
static int64_t getVariantRowAlignBytes(const Variant &v) {
  int64_t bytes = getElementBytes(v.dtype);
  int64_t align = getRowAlignBytes(bytes, v.headDim);
  if (v.headDimV)
    align = std::min(align, getRowAlignBytes(bytes, v.headDimV));
  return align;
}

/// The dynamic-length problem a variant's kernel serves.
static AttentionProblem getProblem(const Variant &v) {
  AttentionProblem p;
  p.elementType = v.dtype;
  // A run-time head dim gets the tile of its bound.
  p.headDim = p.headDimV = v.headDim ? v.headDim : v.maxHeadDim;
  if (v.headDimV)
    p.headDimV = v.headDimV;
  p.mask = v.mask;
  p.hasBias = v.bias != BiasKind::None;
  p.hasSoftcap = v.softcap;
  p.wantsLse = true;
  p.direction = v.direction;
  p.deterministic = v.deterministic;
  p.biasGrad = v.biasGrad;
  p.dropout = v.dropout;
  p.servingLayout = v.layout != SeqLayout::Dense;
  p.kvCache = p.servingLayout && v.layout != SeqLayout::Varlen;
  return p;
}

/// Every (softcap, bias, dtype, D, mask) of `request` as a forward variant
/// without a tile; with `runTimeHeadDims`, every bound of maxHeadDims
/// instead of D (a variant taking D at run time). The runtime matches bias
/// and softcap exactly, so this order only decides among equals.
static SmallVector<Variant> getCombinations(const FamilyRequest &request,
                                            bool runTimeHeadDims = false) {
  SmallVector<bool> caps = {false};
  if (request.softcap)
    caps.push_back(true);
  // (D, Dv) with Dv = 0 for D = Dv; the pairs after the head dims.
  SmallVector<std::pair<int64_t, int64_t>> dims;
  for (int64_t d : runTimeHeadDims ? request.maxHeadDims : request.headDims)
    dims.push_back({d, 0});
  if (!runTimeHeadDims)
    llvm::append_range(dims, request.headDimPairs);
  SmallVector<Variant> out;
  for (bool cap : caps)
    for (BiasKind bias : request.biases)
      for (ElementType dtype : request.dtypes)
        for (auto [d, dv] : dims)
          for (MaskKind mask : request.masks) {
            Variant v{dtype, d, mask, bias, cap, nullptr};
            v.headDimV = dv;
            v.alignBytes = getVariantRowAlignBytes(v);
            if (runTimeHeadDims) {
              v.headDim = 0;
              v.maxHeadDim = d;
              v.alignBytes = 16;
            }
            out.push_back(v);
          }
  return out;
}

/// The size-hinted candidates (seqlen_min) of combination `v` that a sweep
/// (--all-candidates) times beside its `tiles`, for any length: those the
/// tables accept at their hint and that are no kernel of `tiles`.
static SmallVector<const TileCandidate *>
getSizeHintedTiles(const FamilyRequest &request, const Variant &v,
                   ArrayRef<const TileCandidate *> tiles) {
  SmallVector<const TileCandidate *> out;
  if (tiles.empty() || v.maxHeadDim)
    return out;
  for (const TileCandidate &c : request.chip->candidates) {
    if (c.seqlenMin <= 0)
      continue;
    AttentionProblem sized = getProblem(v);
    sized.seqHint = c.seqlenMin;
    if (evaluateCandidate(*request.chip, c, sized, request.profile).accepted &&
        llvm::none_of(tiles, [&](const TileCandidate *t) {
          return getKernelKey(t) == getKernelKey(&c);
        }))
      out.push_back(&c);
  }
  return out;
}

/// `v` with the tile and lengths (dispatch conditions) of size class `c`.
static Variant getSizedVariant(Variant v, const SizeClass &c) {
  v.tile = c.candidate;
  v.seqlenMin = c.range.min;
  v.seqlenMax = c.range.isUnbounded() ? 0 : c.range.max;
  v.minBlocksPerSm = c.minBlocksPerSm;
  return v;
}

/// The size classes of combination `v` (docs/Tuning.md) whose tile is no
/// kernel of its general `tiles`. None for head dims given at run time.
static SmallVector<SizeClass>
getVariantSizeClasses(const FamilyRequest &request, const Variant &v,
                      ArrayRef<const TileCandidate *> tiles) {
  SmallVector<SizeClass> out;
  if (tiles.empty() || v.maxHeadDim)
    return out;
  AttentionProblem problem = getProblem(v);
  const TileCandidate *general =
      selectCandidate(*request.chip, problem, request.profile);
  SmallVector<SizeClass> dropped;
  for (const SizeClass &c :
       getSizeClasses(*request.chip, problem, general, request.sizeHints,
                      request.tuning, request.profile, &dropped))
    if (llvm::none_of(tiles, [&](const TileCandidate *t) {
          return getKernelKey(t) == getKernelKey(c.candidate);
        }))
      out.push_back(c);
  // A tile keeps one range: say which lengths a tuning file (or the hints)
  // gave it that the general tile serves instead.
  for (const SizeClass &c : dropped) {
    const SizeClass *kept = llvm::find_if(
        out, [&](const SizeClass &o) { return o.candidate == c.candidate; });
    llvm::WithColor::warning(llvm::errs(), "attn-bundle")
        << request.chip->name << " " << v.describe() << ": the size class "
        << c.range.str() << " of tile " << c.candidate->name
        << " falls to the general tile "
        << (general ? general->name : std::string("(none)"))
        << ": a tile keeps one range"
        << (kept != out.end() ? " (" + kept->range.str() + ")" : "") << "\n";
  }
  return out;
}

/// Puts the cp.async form of each TMA variant right after it: dispatch
/// takes it for a call TMA cannot describe (a misaligned base, a stride
/// that is no multiple of 16 bytes) or on a driver without tensor maps. A
/// variant whose rows keep less than 16 bytes of alignment (D = 150 in
/// bf16: 4) has the cp.async form alone: tensor maps cannot describe it.
static void insertCopyFallbacks(const ChipSpec &chip,
                                SmallVectorImpl<Variant> &variants) {
  SmallVector<Variant> out;
  for (const Variant &v : variants) {
    bool tma = v.tile->pipeline == PipelineKind::TmaWarpSpecialized;
    if (!tma || v.alignBytes == 16)
      out.push_back(v);
    if (!tma)
      continue;
    if (const TileCandidate *copy = chip.lookupCopyForm(
            *v.tile, PipelineKind::CpAsyncWarpSpecialized)) {
      out.push_back(v);
      out.back().tile = copy;
    }
  }
  variants.assign(out.begin(), out.end());
}

/// Appends an element-aligned twin of each of variants[begin, end) that
/// assumes more than element alignment (a head dim whose rows keep only
/// that needs none, and a size-specialized tile is no faster as a twin;
/// a TMA tile's cp.async form has the twin).
static void appendTwins(SmallVectorImpl<Variant> &variants, size_t begin,
                        size_t end) {
  for (size_t i = begin; i < end; ++i) {
    Variant twin = variants[i];
    if (twin.alignBytes == getElementBytes(twin.dtype) || twin.seqlenMin ||
        twin.tile->pipeline == PipelineKind::TmaWarpSpecialized)
      continue;
    twin.alignBytes = getElementBytes(twin.dtype);
    variants.push_back(twin);
  }
}

/// Appends a dropout twin of each dense variant of variants[begin, end) but
/// the forward's size-specialized ones: a call with dropout needs one, a
/// call without takes the variant without. With `request`, a deterministic
/// backward plan's twin takes the tile the tables choose for it with
/// dropout (the ordered plans, whose dQ pass twins ran 0.64-0.87x the
/// atomic ones: bench/RESULTS.md); a size class whose tile that general
/// choice already is has no twin.
static void appendDropoutTwins(SmallVectorImpl<Variant> &variants, size_t begin,
                               size_t end,
                               const FamilyRequest *request = nullptr,
                               const Profile *profile = nullptr) {
  for (size_t i = begin; i < end; ++i) {
    Variant twin = variants[i];
    if (twin.layout != SeqLayout::Dense ||
        (twin.seqlenMin && twin.direction != Direction::Backward))
      continue;
    twin.dropout = true;
    if (request && twin.direction == Direction::Backward &&
        twin.deterministic) {
      Variant general = twin;
      general.seqlenMin = general.seqlenMax = 0;
      const TileCandidate *tile =
          selectCandidate(*request->chip, getProblem(general), profile);
      if (twin.seqlenMin && tile == twin.tile)
        continue;
      if (!twin.seqlenMin && tile)
        twin.tile = tile;
    }
    variants.push_back(twin);
  }
}

SmallVector<Variant> attn::enumerateVariants(
    const FamilyRequest &request,
    SmallVectorImpl<UnsupportedVariant> &unsupported,
    SmallVectorImpl<UnsupportedVariant> *unsupportedBackward) {
  SmallVector<Variant> variants;
  // Variants taking D at run time after every fixed one: a call with a
  // fixed variant takes it first.
  SmallVector<Variant> combinations = getCombinations(request);
  combinations.append(getCombinations(request, /*runTimeHeadDims=*/true));
  // Within a combination the tiles keep their order.
  for (Variant v : combinations) {
    SmallVector<Verdict> verdicts =
        evaluateCandidates(*request.chip, getProblem(v), request.profile);
    SmallVector<const TileCandidate *> tiles = getTiles(request, v, verdicts);
    if (tiles.empty())
      unsupported.push_back({v, std::move(verdicts)});
    // Size-specialized tiles first, each with the lengths it is chosen
    // for (a dispatch condition), as Inductor compiles per size hint; a
    // sweep (--all-candidates) times them too, after the others, for any
    // length.
    if (request.allCandidates)
      tiles.append(getSizeHintedTiles(request, v, tiles));
    else
      for (const SizeClass &c : getVariantSizeClasses(request, v, tiles))
        variants.push_back(getSizedVariant(v, c));
    for (const TileCandidate *tile : tiles) {
      v.tile = tile;
      variants.push_back(v);
    }
  }
  if (!request.allCandidates)
    insertCopyFallbacks(*request.chip, variants);
  if (request.unaligned)
    appendTwins(variants, 0, variants.size());
  // Serving layouts read and write like dense kernels (their tiles fit the
  // same way); a bias has no meaning for them. f32 serving kernels compile
  // but have not run on a GPU: left out, so such a call is refused.
  size_t dense = variants.size();
  for (SeqLayout layout : request.layouts) {
    if (layout == SeqLayout::Dense)
      continue;
    for (size_t i = 0; i < dense; ++i) {
      Variant v = variants[i];
      bool twin = v.alignBytes != getVariantRowAlignBytes(v);
      // A TMA variant serves packed batches (ahead of its cp.async form,
      // which gives the tables' pick for the layout); a KV cache takes the
      // cp.async form's.
      bool tma = v.tile->pipeline == PipelineKind::TmaWarpSpecialized;
      if (v.bias != BiasKind::None || twin || v.maxHeadDim || v.seqlenMin ||
          v.headDimV || v.dtype == ElementType::F32 ||
          (tma && layout != SeqLayout::Varlen))
        continue;
      v.layout = layout;
      // A tile for dense batches only (warp-specialized) gives way to the
      // tables' pick for the layout.
      AttentionProblem serving = getProblem(v);
      serving.noTensorMaps = !tma;
      if (checkLayout(*v.tile, serving))
        v.tile = selectCandidate(*request.chip, serving, request.profile);
      if (!v.tile)
        continue;
      // A decode tile for the calls of a few query rows, ahead of it.
      if (serving.kvCache) {
        AttentionProblem decode = serving;
        decode.seqQ = 1;
        const TileCandidate *tile =
            selectCandidate(*request.chip, decode, request.profile);
        if (tile && tile->kvCacheSeqlenQMax) {
          Variant d = v;
          d.tile = tile;
          d.seqlenQMax = tile->kvCacheSeqlenQMax;
          variants.push_back(d);
        }
      }
      variants.push_back(v);
    }
  }
  // Dense tiles were chosen either way; keep their variants only if asked.
  if (!request.layouts.empty() &&
      !llvm::is_contained(request.layouts, SeqLayout::Dense))
    variants.erase(variants.begin(), variants.begin() + dense);
  if (request.dropout)
    appendDropoutTwins(variants, 0, variants.size());
  if (!request.backward)
    return variants;
  // One plan per combination: the first backward tile the tables accept.
  // The serving profile excludes backward kernels; asking for plans means
  // training, so a profile without them does not restrict the backward.
  const Profile *profile = request.profile;
  if (profile && !profile->includes(Direction::Backward))
    profile = nullptr;
  size_t firstPlan = variants.size();
  for (Variant v : getCombinations(request)) {
    v.direction = Direction::Backward;
    SmallVector<Verdict> verdicts =
        evaluateCandidates(*request.chip, getProblem(v), profile);
    auto *it =
        llvm::find_if(verdicts, [](const Verdict &x) { return x.accepted; });
    if (it == verdicts.end()) {
      if (unsupportedBackward)
        unsupportedBackward->push_back({v, std::move(verdicts)});
      continue;
    }
    v.tile = it->candidate;
    // A dq_pass tile's plan is deterministic; it also serves calls that
    // allow atomics (the runtime takes a deterministic plan for them where
    // no plan with atomics matches).
    v.deterministic = v.tile->dqPass;
    variants.push_back(v);
  }
  // A plan with a bias also comes computing its gradient (the runtime
  // matches bias_grad exactly: a bias that requires grad takes this one).
  for (size_t i = firstPlan, e = variants.size(); i < e; ++i) {
    if (variants[i].bias == BiasKind::None)
      continue;
    Variant twin = variants[i];
    twin.biasGrad = true;
    variants.push_back(twin);
  }
  // A deterministic twin (dQ without atomics) of each plan, for calls that
  // ask for bit-reproducible gradients: the first tile the tables accept
  // for a deterministic plan. With the bias gradient it serves an unsummed
  // one only (the runtime checks).
  FamilyRequest backwardRequest = request;
  backwardRequest.profile = profile;
  for (size_t i = firstPlan, e = variants.size(); i < e; ++i) {
    if (variants[i].deterministic)
      continue;
    Variant twin = variants[i];
    twin.deterministic = true;
    SmallVector<Verdict> verdicts =
        evaluateCandidates(*request.chip, getProblem(twin), profile);
    auto *it =
        llvm::find_if(verdicts, [](const Verdict &x) { return x.accepted; });
    if (it == verdicts.end()) {
      if (unsupportedBackward)
        unsupportedBackward->push_back({twin, std::move(verdicts)});
      continue;
    }
    twin.tile = it->candidate;
    // Size-specialized deterministic plans first, as the forward's (the
    // ordered dQ of a producer tile from its ordered_dq_seqlen_min).
    for (const SizeClass &c :
         getVariantSizeClasses(backwardRequest, twin, twin.tile))
      variants.push_back(getSizedVariant(twin, c));
    variants.push_back(twin);
  }
  // The plans' element-aligned twins after them, as the forward's.
  if (request.unaligned)
    appendTwins(variants, firstPlan, variants.size());
  if (request.dropout)
    appendDropoutTwins(variants, firstPlan, variants.size(), &request, profile);
  return variants;
}

/// "f16, bf16": the distinct values `get` gives for `group`, in order.
template <typename Get>
static std::string listDistinct(ArrayRef<UnsupportedVariant> group, Get get) {
  SmallVector<std::string> values;
  for (const UnsupportedVariant &u : group)
    if (!llvm::is_contained(values, get(u.variant)))
      values.push_back(get(u.variant));
  return llvm::join(values, ", ");
}

/// The combinations of `group` (of one head dim): compact when they are a
/// whole product of their dtypes, masks, biases and softcaps.
static std::string describeGroup(ArrayRef<UnsupportedVariant> group) {
  auto dtype = [](const Variant &v) {
    return stringifyElementType(v.dtype).lower();
  };
  auto mask = [](const Variant &v) { return stringifyMaskKind(v.mask).str(); };
  auto bias = [](const Variant &v) { return stringifyBiasKind(v.bias).str(); };
  auto cap = [](const Variant &v) {
    return std::string(v.softcap ? "softcap" : "no softcap");
  };
  SmallVector<std::string> parts = {
      listDistinct(group, dtype), listDistinct(group, mask),
      listDistinct(group, bias), listDistinct(group, cap)};
  size_t product = 1;
  for (const std::string &p : parts)
    product *= llvm::count(p, ',') + 1;
  if (product != group.size()) {
    SmallVector<std::string> each;
    for (const UnsupportedVariant &u : group)
      each.push_back(u.variant.describe());
    return llvm::join(each, ", ");
  }
  const Variant &first = group.front().variant;
  bool backward = first.direction == Direction::Backward;
  std::string dv =
      first.headDimV ? (" Dv=" + Twine(first.headDimV)).str() : std::string();
  return llvm::formatv("{0}D={1}{2} ({3}; masks {4}; bias {5}; {6})",
                       !backward             ? ""
                       : first.deterministic ? "the deterministic backward of "
                                             : "the backward of ",
                       first.headDim, dv, parts[0], parts[1], parts[2],
                       parts[3]);
}

void attn::printUnsupported(llvm::raw_ostream &os, const ChipSpec &chip,
                            ArrayRef<UnsupportedVariant> unsupported,
                            bool asWarning) {
  // One message per (D, Dv): Dv = 0 where it is D.
  SmallVector<std::pair<int64_t, int64_t>> dims;
  for (const UnsupportedVariant &u : unsupported)
    if (!llvm::is_contained(dims,
                            std::pair(u.variant.headDim, u.variant.headDimV)))
      dims.push_back({u.variant.headDim, u.variant.headDimV});
  for (auto [d, dv] : dims) {
    SmallVector<UnsupportedVariant> group;
    llvm::copy_if(unsupported, std::back_inserter(group),
                  [&, d = d, dv = dv](const UnsupportedVariant &u) {
                    return u.variant.headDim == d && u.variant.headDimV == dv;
                  });
    // Each reason with the candidates giving it, in first-seen order.
    SmallVector<std::pair<std::string, SmallVector<StringRef>>> reasons;
    for (const UnsupportedVariant &u : group) {
      for (const Verdict &v : u.verdicts) {
        SmallVector<StringRef> parts;
        StringRef(v.reason).split(parts, "; ");
        for (StringRef part : parts) {
          auto *it = llvm::find_if(
              reasons, [&](const auto &r) { return r.first == part; });
          if (it == reasons.end()) {
            reasons.push_back({part.str(), {}});
            it = std::prev(reasons.end());
          }
          if (!llvm::is_contained(it->second, v.candidate->name))
            it->second.push_back(v.candidate->name);
        }
      }
    }
    // Most candidates first; ties keep their first-seen order.
    SmallVector<unsigned> order(reasons.size());
    std::iota(order.begin(), order.end(), 0u);
    llvm::sort(order, [&](unsigned a, unsigned b) {
      return std::make_pair(-reasons[a].second.size(), a) <
             std::make_pair(-reasons[b].second.size(), b);
    });
    (asWarning ? llvm::WithColor::warning(os, "attn-bundle")
               : llvm::WithColor::error(os, "attn-bundle"))
        << chip.name << " cannot compile " << describeGroup(group)
        << ": no candidate of its table accepts "
        << (group.size() > 1 ? "them" : "it") << "; their reasons:\n";
    for (unsigned i : order) {
      const auto &[reason, names] = reasons[i];
      os << "  " << reason << " (";
      if (names.size() > 1)
        os << names.size() << " candidates: ";
      os << llvm::join(ArrayRef(names).take_front(3), ", ")
         << (names.size() > 3 ? ", ..." : "") << ")\n";
    }
    const Variant &first = group.front().variant;
    os << "  (attn-tiles --chip " << chip.name << " --dtype "
       << stringifyElementType(first.dtype).lower() << " --head-dim " << d
       << (dv ? " --head-dim-v " + Twine(dv).str() : std::string())
       << " --mask " << stringifyMaskKind(first.mask)
       << (first.direction == Direction::Backward ? " --direction backward"
                                                  : "")
       << (first.deterministic ? " --deterministic" : "")
       << " gives each candidate's verdict)\n";
  }
}

/// `config` assuming `alignBytes` of alignment instead, serving head dims
/// up to `maxHeadDim` when they are dynamic (0: static), and (a backward
/// plan) without atomics when `deterministic`. Head dims given at run time
/// keep the plain key loop: with overlap_softmax the D <= 256 kernel
/// spilled 20 bytes (ptxas 13.0), where it spills none without.
static ConfigAttr withAlignBytes(ConfigAttr c, int64_t alignBytes,
                                 int64_t maxHeadDim = 0,
                                 bool deterministic = false) {
  return ConfigAttr::get(
      c.getContext(), c.getName(), c.getBlockM(), c.getBlockN(), c.getWarps(),
      c.getStages(), c.getPipeline(), c.getAccInRegisters(), c.getMma(),
      alignBytes, maxHeadDim, deterministic, c.getHeadSplit(),
      c.getPersistent(), c.getOverlapSoftmax() && maxHeadDim == 0);
}

void attn::buildVariantFunc(OpBuilder &b, Location loc, StringRef name,
                            const Variant &variant) {
  MLIRContext *ctx = b.getContext();
  Type elem = variant.dtype == ElementType::F16    ? b.getF16Type()
              : variant.dtype == ElementType::BF16 ? b.getBF16Type()
                                                   : b.getF32Type();
  int64_t dyn = ShapedType::kDynamic;
  // [B, H, S, D] with one head per tensor: the heads are strides of the
  // kernel ABI, not part of the kernel.
  // A packed batch (varlen) is one [1, H, total, D] problem.
  int64_t batch = variant.layout == SeqLayout::Varlen ? 1 : dyn;
  int64_t d = variant.headDim ? variant.headDim : dyn;
  int64_t dv = variant.headDimV ? variant.headDimV : d;
  auto qk = MemRefType::get({batch, 1, dyn, d}, elem);
  auto vo = MemRefType::get({batch, 1, dyn, dv}, elem);
  auto lse = MemRefType::get({batch, 1, dyn}, b.getF32Type());
  auto i32s = MemRefType::get({dyn}, b.getI32Type());
  auto table = MemRefType::get({dyn, dyn}, b.getI32Type());
  // All four bias dimensions dynamic: broadcasting is a stride of 0.
  auto bias =
      MemRefType::get({dyn, dyn, dyn, dyn},
                      variant.bias == BiasKind::F32 ? b.getF32Type() : elem);
  SmallVector<Type> args = {qk, qk, vo, vo, lse};
  if (variant.direction == Direction::Backward)
    args.append({vo, qk, qk, vo}); // do, dq, dk, dv
  unsigned biasIndex = args.size();
  if (variant.bias != BiasKind::None)
    args.push_back(bias);
  unsigned gradBiasIndex = args.size();
  if (variant.biasGrad)
    args.push_back(bias);
  unsigned firstServing = args.size();
  if (variant.layout == SeqLayout::Varlen)
    args.append({i32s, i32s});
  if (variant.layout == SeqLayout::KVCache)
    args.push_back(i32s);
  if (variant.layout == SeqLayout::Paged) {
    // Pages: [num_pages, 1, page_size, D].
    args[1] = MemRefType::get({dyn, 1, dyn, d}, elem);
    args[2] = MemRefType::get({dyn, 1, dyn, dv}, elem);
    args.append({i32s, table});
  }
  // dropout_p, seed, offset: run-time values like the kernel's.
  unsigned dropoutIndex = args.size();
  if (variant.dropout)
    args.append({b.getF32Type(), b.getI64Type(), b.getI32Type()});

  auto func =
      func::FuncOp::create(b, loc, name, FunctionType::get(ctx, args, {}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value biasArg =
      variant.bias != BiasKind::None ? body->getArgument(biasIndex) : Value();
  Value dropout[3];
  if (variant.dropout)
    for (unsigned i = 0; i < 3; ++i)
      dropout[i] = body->getArgument(dropoutIndex + i);
  DenseI64ArrayAttr window;
  if (variant.mask == MaskKind::SlidingWindow)
    window = b.getDenseI64ArrayAttr({128, 0});
  // The cap itself is a kernel argument; any value makes the op soft-capped.
  FloatAttr softcap = variant.softcap ? b.getF32FloatAttr(1.0f) : FloatAttr();
  ConfigAttr config = withAlignBytes(
      toConfigAttr(ctx, *variant.tile, getProblem(variant)), variant.alignBytes,
      variant.maxHeadDim, variant.deterministic);
  if (variant.direction == Direction::Backward) {
    auto arg = [&](unsigned i) { return body->getArgument(i); };
    AttentionGradOp::create(
        b, loc, TypeRange(), arg(0), arg(1), arg(2), arg(3), arg(5), arg(4),
        biasArg, dropout[0], dropout[1], dropout[2], arg(6), arg(7), arg(8),
        variant.biasGrad ? arg(gradBiasIndex) : Value(),
        /*scale=*/FloatAttr(), variant.mask, window, softcap, config);
    func::ReturnOp::create(b, loc);
    return;
  }
  Value serving[4]; // cu_seqlens_q, cu_seqlens_k, seqlens_k, block_table
  auto servingArg = [&](unsigned i) {
    return body->getArgument(firstServing + i);
  };
  if (variant.layout == SeqLayout::Varlen) {
    serving[0] = servingArg(0);
    serving[1] = servingArg(1);
  } else if (variant.layout != SeqLayout::Dense) {
    serving[2] = servingArg(0);
    if (variant.layout == SeqLayout::Paged)
      serving[3] = servingArg(1);
  }
  AttentionOp::create(
      b, loc, TypeRange(), body->getArgument(0), body->getArgument(1),
      body->getArgument(2), biasArg, serving[0], serving[1], serving[2],
      serving[3], dropout[0], dropout[1], dropout[2], body->getArgument(3),
      body->getArgument(4),
      /*scale=*/FloatAttr(), variant.mask, window, softcap, config);
  func::ReturnOp::create(b, loc);
}

OwningOpRef<ModuleOp> attn::buildVariantModule(MLIRContext &ctx,
                                               const Variant &variant) {
  ctx.loadDialect<AttnDialect, func::FuncDialect, memref::MemRefDialect>();
  Location loc = NameLoc::get(StringAttr::get(&ctx, variant.describe()));
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b, loc);
  b.setInsertionPointToEnd(module->getBody());
  buildVariantFunc(b, loc, "variant", variant);
  return module;
}
