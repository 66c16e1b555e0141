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

std::string Problem::moduleText() const {
  llvm::StringRef et = dtypeName(dtype);
  int64_t dvv = dv ? dv : d;
  std::string qT = memrefType(hq, d, et), kT = memrefType(hkv, d, et),
              vT = memrefType(hkv, dvv, et), oT = memrefType(hq, dvv, et);
  std::string biasT;
  if (bias) {
    // Broadcast dimensions are static 1; the others have the operand's
    // static/dynamic nature (only Hq is static).
    biasT = "memref<";
    for (int i = 0; i < 4; ++i) {
      if ((*bias)[i] == 1)
        biasT += "1x";
      else
        biasT += i == 1 ? std::to_string(hq) + "x" : "?x";
    }
    biasT += (biasF32 ? "f32" : et.str()) + ">";
  }
  std::string lseT = "memref<?x" + std::to_string(hq) + "x?xf32>";

  std::string s;
  llvm::raw_string_ostream os(s);
  os << "func.func @attn(%q: " << qT << ", %k: " << kT << ", %v: " << vT;
  if (bias)
    os << ", %bias: " << biasT;
  os << ", %o: " << oT;
  if (lse)
    os << ", %lse: " << lseT;
  os << ") attributes {llvm.emit_c_interface} {\n";
  os << "  attn.attention q(%q : " << qT << ") k(%k : " << kT
     << ") v(%v : " << vT << ")";
  if (bias)
    os << " bias(%bias : " << biasT << ")";
  os << " outs(%o : " << oT << ")";
  if (lse)
    os << " lse(%lse : " << lseT << ")";
  os << " {mask = #attn.mask<" << mask << ">";
  if (mask == "sliding_window")
    os << ", window = array<i64: " << windowLeft << ", " << windowRight << ">";
  if (scale)
    os << ", scale = " << floatLiteral(*scale) << " : f32";
  if (softcap)
    os << ", softcap = " << floatLiteral(*softcap) << " : f32";
  if (blockM > 0)
    os << ", config = #attn.config<name = \"runner\", block_m = " << blockM
       << ", block_n = " << blockN
       << ", warps = 1, stages = 1, pipeline = simple, "
          "acc_in_registers = false, mma = fma>";
  os << "}\n  return\n}\n";
  return s;
}

std::string Problem::describe() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << dtypeName(dtype) << " B=" << batch << " Hq=" << hq << " Hkv=" << hkv
     << " Sq=" << sq << " Sk=" << sk << " D=" << d << " Dv=" << (dv ? dv : d)
     << " mask=" << mask;
  if (mask == "sliding_window")
    os << "(" << windowLeft << "," << windowRight << ")";
  if (bias)
    os << " bias=" << (*bias)[0] << "x" << (*bias)[1] << "x" << (*bias)[2]
       << "x" << (*bias)[3] << (biasF32 ? ":f32" : "");
  if (softcap)
    os << " softcap=" << *softcap;
  if (lse)
    os << " lse";
  os << " seed=" << seed;
  return s;
}

std::string attn_runner::parseProblemFlags(llvm::ArrayRef<std::string> args,
                                           Problem &p) {
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef flag = args[i];
    if (flag == "--lse") {
      p.lse = true;
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
  if ((p.blockM > 0) != (p.blockN > 0))
    return "--block-m and --block-n go together";
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
