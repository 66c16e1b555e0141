//===- KernelCache.cpp - compiled modules kept on disk ----------*- C++ -*-===//

#include "KernelCache.h"
#include "Compile.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;
using namespace mlir::attn;

/// Bumped when an entry's layout changes.
static constexpr llvm::StringLiteral kEntryFormat = "attn-bundle-cache-v1";

static std::string hashBytes(StringRef bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)),
                     /*LowerCase=*/true);
}

/// What `program args...` prints, or a line saying it could not run: either
/// way a change of the program changes the text.
static std::string getOutput(StringRef program, ArrayRef<StringRef> args) {
  SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("attn-bundle-version", "txt", out))
    return "cannot run " + program.str();
  SmallVector<StringRef> argv = {program};
  argv.append(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(out),
                                          StringRef("")};
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects);
  auto text = llvm::MemoryBuffer::getFile(out);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !text)
    return "cannot run " + program.str();
  return (*text)->getBuffer().str();
}

/// Names, sizes and modification times of the files in `dir`.
static std::string listFiles(StringRef dir) {
  std::string list;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status))
      continue;
    list += llvm::formatv(
        "{0} {1} {2}\n", llvm::sys::path::filename(it->path()),
        status.getSize(),
        status.getLastModificationTime().time_since_epoch().count());
  }
  return list;
}

/// What, besides the module and the pipeline, decides the kernels.
static std::string getBuildIdentity(const CompileOptions &options) {
  std::string id =
      (kEntryFormat + "\nLLVM " + LLVM_VERSION_STRING + "\n").str();
  // The attn libraries are linked into the executable: any change to the
  // compiler changes its bytes.
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (auto exe = llvm::MemoryBuffer::getFile(self))
    id += "attn-bundle " + hashBytes((*exe)->getBuffer()) + "\n";
  SmallString<256> path(options.toolkit);
  if (options.chip->vendor == Vendor::Nvidia) {
    llvm::sys::path::append(path, "bin", "ptxas");
    id += getOutput(path, {"--version"});
  } else {
    llvm::sys::path::append(path, "llvm", "bin", "ld.lld");
    id += getOutput(path, {"--version"});
    path = options.toolkit;
    llvm::sys::path::append(path, "amdgcn", "bitcode");
    id += listFiles(path);
  }
  return id;
}

KernelCache::KernelCache(std::string dir, unsigned numTasks, std::string salt)
    : dir(std::move(dir)), hits(numTasks), salt(std::move(salt)) {}

llvm::Expected<std::unique_ptr<KernelCache>>
KernelCache::open(StringRef dir, unsigned numTasks,
                  const CompileOptions &options, StringRef pipeline) {
  std::string salt = getBuildIdentity(options) + "\n" + pipeline.str() + "\n";
  std::unique_ptr<KernelCache> kc(
      new KernelCache(dir.str(), numTasks, std::move(salt)));
  KernelCache *self = kc.get();
  llvm::Expected<llvm::FileCache> cache =
      llvm::localCache("attn-bundle", "attn-bundle-tmp", dir,
                       [self](unsigned task, const llvm::Twine &,
                              std::unique_ptr<llvm::MemoryBuffer> buffer) {
                         self->hits[task] = std::move(buffer);
                       });
  if (!cache)
    return cache.takeError();
  kc->cache = std::move(*cache);
  return kc;
}

std::string KernelCache::getKey(StringRef ir) const {
  return hashBytes(salt + ir.str());
}

std::optional<std::vector<BundleKernel>> KernelCache::lookup(unsigned task,
                                                             StringRef key) {
  llvm::Expected<llvm::AddStreamFn> stream = cache(task, key, key);
  if (!stream) {
    llvm::consumeError(stream.takeError());
    return std::nullopt;
  }
  if (*stream)
    return std::nullopt;
  std::unique_ptr<llvm::MemoryBuffer> entry = std::move(hits[task]);
  std::vector<BundleKernel> kernels;
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(entry->getBuffer());
  llvm::json::Path::Root root;
  if (json && fromJSON(*json, kernels, root))
    return kernels;
  // A damaged entry (a full disk, say) is compiled again and replaced.
  llvm::consumeError(json.takeError());
  SmallString<256> path(dir);
  llvm::sys::path::append(path, "llvmcache-" + key);
  llvm::sys::fs::remove(path);
  return std::nullopt;
}

llvm::Error KernelCache::store(unsigned task, StringRef key,
                               ArrayRef<BundleKernel> kernels) {
  llvm::Expected<llvm::AddStreamFn> addStream = cache(task, key, key);
  if (!addStream)
    return addStream.takeError();
  // Another run stored it meanwhile.
  if (!*addStream) {
    hits[task].reset();
    return llvm::Error::success();
  }
  llvm::Expected<std::unique_ptr<llvm::CachedFileStream>> stream =
      (*addStream)(task, key);
  if (!stream)
    return stream.takeError();
  llvm::json::Array entry;
  for (const BundleKernel &k : kernels)
    entry.push_back(toJSON(k));
  *(*stream)->OS << llvm::json::Value(std::move(entry));
  llvm::Error e = (*stream)->commit();
  hits[task].reset();
  return e;
}

void KernelCache::prune() {
  llvm::CachePruningPolicy policy;
  policy.Expiration = std::chrono::hours(30 * 24);
  policy.MaxSizeBytes = uint64_t(2) << 30;
  llvm::pruneCache(dir, policy);
}
