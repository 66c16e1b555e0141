//===- FieldReader.h - checked reads of JSON objects ------------*- C++ -*-===//
//
// Shared by the tile-table and tuning-file readers. llvm::json::ObjectMapper
// is not used: it ignores unknown fields, which is how a misspelled optional
// field would go unnoticed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_FIELDREADER_H
#define ATTN_LIB_TARGET_FIELDREADER_H

#include "AttnDialect/Target/TileTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace mlir {
namespace attn {

/// Reads the fields of one JSON object, remembering the first error and
/// which fields were read, so unknown fields can be reported afterwards.
class FieldReader {
public:
  FieldReader(const llvm::json::Value *value, std::string where,
              std::string &error)
      : obj(value ? value->getAsObject() : nullptr), where(std::move(where)),
        error(error) {
    if (!obj)
      fail("expected an object");
  }

  bool ok() const { return error.empty(); }

  void fail(const llvm::Twine &msg) {
    if (error.empty())
      error = (where + ": " + msg).str();
  }

  const llvm::json::Value *get(llvm::StringRef key, bool required) {
    known.insert(key);
    if (!obj)
      return nullptr;
    const llvm::json::Value *v = obj->get(key);
    if (!v && required)
      fail("missing field '" + key + "'");
    return v;
  }

  int64_t getInt(llvm::StringRef key, bool required = true, int64_t dflt = 0) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return dflt;
    if (std::optional<int64_t> i = v->getAsInteger())
      return *i;
    fail("field '" + key + "': expected an integer");
    return dflt;
  }

  bool getBool(llvm::StringRef key, bool required = true, bool dflt = false) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return dflt;
    if (std::optional<bool> b = v->getAsBoolean())
      return *b;
    fail("field '" + key + "': expected a boolean");
    return dflt;
  }

  std::string getString(llvm::StringRef key, bool required = true) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return {};
    if (std::optional<llvm::StringRef> s = v->getAsString())
      return s->str();
    fail("field '" + key + "': expected a string");
    return {};
  }

  llvm::SmallVector<std::string> getStrings(llvm::StringRef key,
                                            bool required = true) {
    llvm::SmallVector<std::string> result;
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return result;
    const llvm::json::Array *arr = v->getAsArray();
    if (!arr) {
      fail("field '" + key + "': expected a list of strings");
      return result;
    }
    for (const llvm::json::Value &e : *arr) {
      if (std::optional<llvm::StringRef> s = e.getAsString())
        result.push_back(s->str());
      else
        fail("field '" + key + "': expected a list of strings");
    }
    return result;
  }

  llvm::SmallVector<int64_t> getInts(llvm::StringRef key, bool required) {
    llvm::SmallVector<int64_t> result;
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return result;
    const llvm::json::Array *arr = v->getAsArray();
    if (!arr) {
      fail("field '" + key + "': expected a list of integers");
      return result;
    }
    for (const llvm::json::Value &e : *arr) {
      if (std::optional<int64_t> i = e.getAsInteger())
        result.push_back(*i);
      else
        fail("field '" + key + "': expected a list of integers");
    }
    return result;
  }

  llvm::SmallVector<ElementType> getElementTypes(llvm::StringRef key) {
    llvm::SmallVector<ElementType> result;
    for (const std::string &name : getStrings(key)) {
      if (std::optional<ElementType> t = symbolizeElementType(name))
        result.push_back(*t);
      else
        fail("field '" + key + "': unknown element type '" + name +
             "' (known: f16, bf16, f32)");
    }
    return result;
  }

  /// Call after reading every field: reports the first unknown one.
  void finish() {
    if (!obj)
      return;
    for (const auto &kv : *obj)
      if (!known.contains(kv.first))
        fail("unknown field '" + kv.first.str() + "'");
  }

private:
  const llvm::json::Object *obj;
  std::string where;
  std::string &error;
  llvm::StringSet<> known;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TARGET_FIELDREADER_H
