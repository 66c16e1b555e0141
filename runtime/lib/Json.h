//===- Json.h - A small strict JSON reader --------------------------------===//
//
// bundle.json is the only JSON the runtime reads, and the runtime must build
// with nothing but a C++ compiler, so it carries its own reader. It is strict
// (RFC 8259: no comments, no trailing commas, no duplicate keys) because a
// bundle that only some readers accept would fail far from where it was made.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JSON_H
#define ATTN_RUNTIME_JSON_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::json {

class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  /// Whether the number was written without fraction or exponent.
  bool isInteger = false;
  std::string string;
  std::vector<Value> array;
  /// Keys in sorted order; duplicates are rejected by the parser.
  std::map<std::string, Value> object;

  /// The member `key` of an object, or null when absent or not an object.
  const Value *get(const std::string &key) const;
};

/// "null", "a boolean", "a number", ...: for messages.
const char *kindName(Value::Kind kind);

/// Parses `text` as one JSON document. On failure returns false and sets
/// `error` to a message with the line and column.
bool parse(const std::string &text, Value &result, std::string &error);

} // namespace attn::json

#endif // ATTN_RUNTIME_JSON_H
