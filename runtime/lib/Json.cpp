//===- Json.cpp - A small strict JSON reader ------------------------------===//

#include "Json.h"

#include <cmath>
#include <cstdlib>

using namespace attn::json;

const Value *Value::get(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

const char *attn::json::kindName(Value::Kind kind) {
  switch (kind) {
  case Value::Kind::Null:
    return "null";
  case Value::Kind::Bool:
    return "a boolean";
  case Value::Kind::Number:
    return "a number";
  case Value::Kind::String:
    return "a string";
  case Value::Kind::Array:
    return "an array";
  case Value::Kind::Object:
    return "an object";
  }
  return "a value";
}

namespace {

/// Recursive descent over the text; bounded nesting so a hostile file cannot
/// exhaust the stack.
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parseDocument(Value &result) {
    skipSpace();
    if (!parseValue(result, 0))
      return false;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value");
    return true;
  }

  std::string error;

private:
  static constexpr int kMaxDepth = 64;

  bool fail(const std::string &what) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error = "line " + std::to_string(line) + ", column " +
            std::to_string(column) + ": " + what;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consumeWord(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    if (pos >= text.size())
      return fail("unexpected end of input, expected a value");
    char c = text[pos];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      out.kind = Value::Kind::String;
      return parseString(out.string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (consumeWord("true")) {
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return true;
    }
    if (consumeWord("false")) {
      out.kind = Value::Kind::Bool;
      out.boolean = false;
      return true;
    }
    if (consumeWord("null")) {
      out.kind = Value::Kind::Null;
      return true;
    }
    return fail(std::string("unexpected character '") + c +
                "', expected a value");
  }

  bool parseObject(Value &out, int depth) {
    out.kind = Value::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      std::string key;
      if (!parseString(key))
        return false;
      if (out.object.count(key))
        return fail("duplicate key \"" + key + "\"");
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':' after key \"" + key + "\"");
      ++pos;
      skipSpace();
      if (!parseValue(out.object[key], depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}' in object");
    }
  }

  bool parseArray(Value &out, int depth) {
    out.kind = Value::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      out.array.emplace_back();
      if (!parseValue(out.array.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']' in array");
    }
  }

  bool parseHex4(unsigned &code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        code |= c - 'A' + 10;
      else
        return fail("bad hex digit in \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      unsigned char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (c < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += char(c);
        ++pos;
        continue;
      }
      if (++pos >= text.size())
        return fail("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xD800 && code <= 0xDBFF) {
          unsigned low;
          if (!consumeWord("\\u") || !parseHex4(low) || low < 0xDC00 ||
              low > 0xDFFF)
            return fail("unpaired surrogate in \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
          return fail("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        --pos;
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(Value &out) {
    size_t start = pos;
    bool integer = true;
    if (text[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t first = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - first;
    };
    if (pos < text.size() && text[pos] == '0') {
      ++pos;
    } else if (digits() == 0) {
      return fail("bad number");
    }
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      integer = false;
      if (digits() == 0)
        return fail("bad number: digits expected after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      integer = false;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return fail("bad number: digits expected in exponent");
    }
    std::string literal = text.substr(start, pos - start);
    out.kind = Value::Kind::Number;
    out.number = std::strtod(literal.c_str(), nullptr);
    out.isInteger = integer;
    if (!std::isfinite(out.number))
      return fail("number out of range");
    return true;
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace

bool attn::json::parse(const std::string &text, Value &result,
                       std::string &error) {
  Parser parser(text);
  result = Value();
  if (parser.parseDocument(result))
    return true;
  error = parser.error;
  return false;
}
