//===- Problem.cpp - one attention problem of attn-cpu-runner ---*- C++ -*-===//

#include "Problem.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace attn_runner;

llvm::StringRef attn_runner::dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

namespace {
/// memref<?xHx?xDxT>: B and S dynamic so one kernel serves every length.
std::string memrefType(int64_t heads, int64_t last, llvm::StringRef elem) {
  return ("memref<?x" + llvm::Twine(heads) + "x?x" + llvm::Twine(last) + "x" +
          elem + ">")
      .str();
}

std::string floatLiteral(float v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.9e", static_cast<double>(v));
  return s;
}

bool parseInt(const std::string &s, int64_t &out) {
  return !llvm::StringRef(s).trim().getAsInteger(10, out);
}
} // namespace

namespace {
/// The op's attributes, `{...}`, shared by both directions.
std::string attrText(const Problem &p) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << " {mask = #attn.mask<" << p.mask << ">";
  if (p.mask == "sliding_window")
    os << ", window = array<i64: " << p.windowLeft << ", " << p.windowRight
       << ">";
  if (p.scale)
    os << ", scale = " << floatLiteral(*p.scale) << " : f32";
  if (p.softcap)
    os << ", softcap = " << floatLiteral(*p.softcap) << " : f32";
  if (p.blockM > 0)
    os << ", config = #attn.config<name = \"runner\", block_m = " << p.blockM
       << ", block_n = " << p.blockN
       << ", warps = 1, stages = 1, pipeline = simple, "
          "acc_in_registers = false, mma = fma>";
  os << "}";
  return s;
}

/// The bias type: broadcast dimensions are static 1; the others have the
/// operand's static/dynamic nature (only Hq is static).
std::string biasType(const Problem &p, llvm::StringRef elem) {
  std::string t = "memref<";
  for (int i = 0; i < 4; ++i) {
    if ((*p.bias)[i] == 1)
      t += "1x";
    else
      t += i == 1 ? std::to_string(p.hq) + "x" : "?x";
  }
  return t + elem.str() + ">";
}
} // namespace

std::string Problem::moduleText() const {
  llvm::StringRef et = dtypeName(dtype);
  int64_t dvv = dv ? dv : d;
  std::string qT = memrefType(hq, d, et), kT = memrefType(hkv, d, et),
              vT = memrefType(hkv, dvv, et), oT = memrefType(hq, dvv, et);
  std::string biasT, gradBiasT;
  if (bias) {
    biasT = biasType(*this, biasF32 ? "f32" : et);
    gradBiasT = biasType(*this, gradBiasF32 || biasF32 ? "f32" : et);
  }
  std::string lseT = "memref<?x" + std::to_string(hq) + "x?xf32>";
  // A packed batch is one [1, H, total, D] problem; pages are
  // [num_pages, Hkv, page_size, D].
  if (layout == "varlen") {
    auto packed = [&](int64_t heads, int64_t last) {
      return "memref<1x" + std::to_string(heads) + "x?x" +
             std::to_string(last) + "x" + et.str() + ">";
    };
    qT = packed(hq, d), kT = packed(hkv, d), vT = packed(hkv, dvv),
    oT = packed(hq, dvv);
    lseT = "memref<1x" + std::to_string(hq) + "x?xf32>";
  } else if (layout == "paged") {
    kT = "memref<?x" + std::to_string(hkv) + "x?x" + std::to_string(d) + "x" +
         et.str() + ">";
    vT = "memref<?x" + std::to_string(hkv) + "x?x" + std::to_string(dvv) + "x" +
         et.str() + ">";
  }

  std::string s;
  llvm::raw_string_ostream os(s);
  os << "func.func @attn(%q: " << qT << ", %k: " << kT << ", %v: " << vT;
  if (backward) {
    os << ", %o: " << oT << ", %do: " << oT << ", %lse: " << lseT;
    if (bias)
      os << ", %bias: " << biasT;
    if (dropoutP)
      os << ", %p: f32, %seed: i64, %offset: i32";
    os << ", %dq: " << qT << ", %dk: " << kT << ", %dv: " << vT;
    if (gradBias)
      os << ", %dbias: " << gradBiasT;
    os << ") attributes {llvm.emit_c_interface} {\n";
    os << "  attn.attention_grad q(%q : " << qT << ") k(%k : " << kT
       << ") v(%v : " << vT << ") o(%o : " << oT << ") do(%do : " << oT
       << ") lse(%lse : " << lseT << ")";
    if (bias)
      os << " bias(%bias : " << biasT << ")";
    if (dropoutP)
      os << " dropout(%p, %seed, %offset)";
    os << " outs(%dq, %dk, %dv : " << qT << ", " << kT << ", " << vT << ")";
    if (gradBias)
      os << " grad_bias(%dbias : " << gradBiasT << ")";
  } else {
    if (bias)
      os << ", %bias: " << biasT;
    if (layout == "varlen")
      os << ", %cq: memref<?xi32>, %ck: memref<?xi32>";
    if (layout == "kvcache" || layout == "paged")
      os << ", %lens: memref<?xi32>";
    if (layout == "paged")
      os << ", %table: memref<?x?xi32>";
    if (dropoutP)
      os << ", %p: f32, %seed: i64, %offset: i32";
    os << ", %o: " << oT;
    if (lse)
      os << ", %lse: " << lseT;
    os << ") attributes {llvm.emit_c_interface} {\n";
    os << "  attn.attention q(%q : " << qT << ") k(%k : " << kT
       << ") v(%v : " << vT << ")";
    if (bias)
      os << " bias(%bias : " << biasT << ")";
    if (layout == "varlen")
      os << " cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : "
            "memref<?xi32>)";
    if (layout == "kvcache" || layout == "paged")
      os << " seqlens_k(%lens : memref<?xi32>)";
    if (layout == "paged")
      os << " block_table(%table : memref<?x?xi32>)";
    if (dropoutP)
      os << " dropout(%p, %seed, %offset)";
    os << " outs(%o : " << oT << ")";
    if (lse)
      os << " lse(%lse : " << lseT << ")";
  }
  os << attrText(*this) << "\n  return\n}\n";
  return s;
}

std::string Problem::describe() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << dtypeName(dtype);
  // A packed batch's sizes are its sequence lengths, printed below.
  if (layout != "varlen")
    os << " B=" << batch;
  os << " Hq=" << hq << " Hkv=" << hkv;
  if (layout != "varlen")
    os << " Sq=" << sq << " Sk=" << sk;
  os << " D=" << d << " Dv=" << (dv ? dv : d) << " mask=" << mask;
  if (mask == "sliding_window")
    os << "(" << windowLeft << "," << windowRight << ")";
  if (layout != "dense") {
    os << " layout=" << layout;
    auto list = [&](llvm::StringRef name, const std::vector<int64_t> &v) {
      if (v.empty())
        return;
      os << " " << name << "=";
      for (auto [i, n] : llvm::enumerate(v))
        os << (i ? "," : "") << n;
    };
    list("seqlens_q", seqlensQ);
    list("seqlens_k", seqlensK);
    if (layout == "paged")
      os << " page_size=" << pageSize;
    if (kvSplits > 1)
      os << " kv_splits=" << kvSplits;
  }
  if (bias)
    os << " bias=" << (*bias)[0] << "x" << (*bias)[1] << "x" << (*bias)[2]
       << "x" << (*bias)[3] << (biasF32 ? ":f32" : "");
  if (softcap)
    os << " softcap=" << *softcap;
  if (dropoutP)
    os << " dropout=" << *dropoutP << "(" << dropoutSeed << "," << dropoutOffset
       << ")";
  if (lse)
    os << " lse";
  if (backward)
    os << " backward";
  if (gradBias)
    os << " grad_bias" << (gradBiasF32 ? ":f32" : "");
  os << " seed=" << seed;
  return s;
}

std::string attn_runner::parseProblemFlags(llvm::ArrayRef<std::string> args,
                                           Problem &p) {
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef flag = args[i];
    // Flags without a value.
    if (flag == "--lse") {
      p.lse = true;
      continue;
    }
    if (flag == "--backward") {
      p.backward = true;
      continue;
    }
    if (flag == "--grad-bias" || flag == "--grad-bias-f32") {
      p.gradBias = true;
      p.gradBiasF32 = flag == "--grad-bias-f32";
      continue;
    }
    if (i + 1 >= args.size())
      return ("flag " + flag + " expects a value").str();
    const std::string &val = args[++i];
    auto intFlag = [&](int64_t &out, int64_t min) -> std::string {
      if (!parseInt(val, out) || out < min)
        return ("flag " + flag + ": expected an integer >= " +
                llvm::Twine(min) + ", got '" + val + "'")
            .str();
      return "";
    };
    std::string err;
    if (flag == "--batch")
      err = intFlag(p.batch, 1);
    else if (flag == "--hq")
      err = intFlag(p.hq, 1);
    else if (flag == "--hkv")
      err = intFlag(p.hkv, 1);
    else if (flag == "--sq")
      err = intFlag(p.sq, 1);
    else if (flag == "--sk")
      err = intFlag(p.sk, 1);
    else if (flag == "--d")
      err = intFlag(p.d, 1);
    else if (flag == "--dv")
      err = intFlag(p.dv, 1);
    else if (flag == "--block-m")
      err = intFlag(p.blockM, 1);
    else if (flag == "--block-n")
      err = intFlag(p.blockN, 1);
    else if (flag == "--seed") {
      int64_t seed;
      err = intFlag(seed, 0);
      p.seed = seed;
    } else if (flag == "--dtype") {
      if (val == "f32")
        p.dtype = DType::F32;
      else if (val == "f16")
        p.dtype = DType::F16;
      else if (val == "bf16")
        p.dtype = DType::BF16;
      else
        err = "flag --dtype: expected f32, f16 or bf16, got '" + val + "'";
    } else if (flag == "--mask") {
      if (val != "none" && val != "causal" && val != "causal_bottom_right" &&
          val != "sliding_window")
        err = "flag --mask: expected none, causal, causal_bottom_right or "
              "sliding_window, got '" +
              val + "'";
      p.mask = val;
    } else if (flag == "--window") {
      auto [l, r] = llvm::StringRef(val).split(',');
      if (l.trim().getAsInteger(10, p.windowLeft) ||
          r.trim().getAsInteger(10, p.windowRight))
        err = "flag --window: expected LEFT,RIGHT, got '" + val + "'";
    } else if (flag == "--bias" || flag == "--bias-f32") {
      llvm::SmallVector<llvm::StringRef> dims;
      llvm::StringRef(val).split(dims, 'x');
      std::array<int64_t, 4> shape;
      if (dims.size() != 4)
        err =
            ("flag " + flag + ": expected BxHxSqxSk, got '" + val + "'").str();
      for (size_t j = 0; err.empty() && j < dims.size(); ++j)
        if (dims[j].getAsInteger(10, shape[j]) || shape[j] < 1)
          err = ("flag " + flag + ": bad dimension '" + dims[j] + "'").str();
      p.bias = shape;
      p.biasF32 = flag == "--bias-f32";
    } else if (flag == "--layout") {
      if (val != "dense" && val != "varlen" && val != "kvcache" &&
          val != "paged")
        err = "flag --layout: expected dense, varlen, kvcache or paged, got '" +
              val + "'";
      p.layout = val;
    } else if (flag == "--seqlens-q" || flag == "--seqlens-k") {
      std::vector<int64_t> &list =
          flag == "--seqlens-q" ? p.seqlensQ : p.seqlensK;
      list.clear();
      llvm::SmallVector<llvm::StringRef> parts;
      llvm::StringRef(val).split(parts, ',');
      for (llvm::StringRef part : parts) {
        int64_t n;
        if (part.trim().getAsInteger(10, n) || n < 0) {
          err = ("flag " + flag + ": expected lengths >= 0 like 3,0,17, got '" +
                 val + "'")
                    .str();
          break;
        }
        list.push_back(n);
      }
    } else if (flag == "--dropout") {
      double v;
      if (llvm::StringRef(val).getAsDouble(v) || !(v >= 0 && v < 1))
        err = "flag --dropout: expected a probability in [0, 1), got '" + val +
              "'";
      p.dropoutP = static_cast<float>(v);
    } else if (flag == "--dropout-seed") {
      if (llvm::StringRef(val).getAsInteger(0, p.dropoutSeed))
        err =
            "flag --dropout-seed: expected an unsigned 64-bit integer, got '" +
            val + "'";
    } else if (flag == "--dropout-offset") {
      if (llvm::StringRef(val).getAsInteger(0, p.dropoutOffset))
        err = "flag --dropout-offset: expected an unsigned 32-bit integer, "
              "got '" +
              val + "'";
    } else if (flag == "--page-size") {
      err = intFlag(p.pageSize, 1);
    } else if (flag == "--kv-splits") {
      err = intFlag(p.kvSplits, 1);
    } else if (flag == "--scale" || flag == "--softcap") {
      double v;
      if (llvm::StringRef(val).getAsDouble(v) || !(v > 0))
        err =
            ("flag " + flag + ": expected a positive number, got '" + val + "'")
                .str();
      (flag == "--scale" ? p.scale : p.softcap) = static_cast<float>(v);
    } else {
      err = ("unknown flag '" + flag + "'").str();
    }
    if (!err.empty())
      return err;
  }
  if (p.hq % p.hkv != 0)
    return "--hq " + std::to_string(p.hq) + " must be a multiple of --hkv " +
           std::to_string(p.hkv);
  if (p.gradBias && (!p.backward || !p.bias))
    return "--grad-bias needs --backward and --bias (or --bias-f32)";
  if ((p.blockM > 0) != (p.blockN > 0))
    return "--block-m and --block-n go together";
  if (p.layout != "dense") {
    if (p.bias || p.backward || p.dropoutP)
      return "--layout " + p.layout +
             " takes no --bias, --backward or --dropout";
    if (p.layout == "varlen" &&
        (p.seqlensQ.empty() || p.seqlensQ.size() != p.seqlensK.size()))
      return "--layout varlen needs --seqlens-q and --seqlens-k of one "
             "length (one entry per sequence)";
    if (p.layout != "varlen" &&
        p.seqlensK.size() != static_cast<size_t>(p.batch))
      return "--layout " + p.layout + " needs --seqlens-k with --batch (" +
             std::to_string(p.batch) + ") entries";
    if (p.layout == "paged" && p.pageSize < 1)
      return "--layout paged needs --page-size";
  }
  if (p.bias) {
    int64_t full[4] = {p.batch, p.hq, p.sq, p.sk};
    for (int i = 0; i < 4; ++i)
      if ((*p.bias)[i] != 1 && (*p.bias)[i] != full[i])
        return "--bias: dimension " + std::to_string(i) + " is " +
               std::to_string((*p.bias)[i]) + ", expected 1 or " +
               std::to_string(full[i]);
  }
  return "";
}
