#include "gpuscale/core/go_quote.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace gpuscale::core {
namespace {

struct RuneRange {
  uint32_t first;
  uint32_t last;
};

constexpr RuneRange kPrintableRanges[] = {
#include "go_printable_table.inc"
};

constexpr bool ascendingAndDisjoint() {
  for (size_t i = 0; i < std::size(kPrintableRanges); ++i) {
    if (kPrintableRanges[i].first > kPrintableRanges[i].last) return false;
    if (i > 0 && kPrintableRanges[i - 1].last >= kPrintableRanges[i].first) return false;
  }
  return true;
}
static_assert(ascendingAndDisjoint(), "isPrintable() binary-searches the table");

constexpr char kLowerHex[] = "0123456789abcdef";

// Go's strconv.IsPrint.
bool isPrintable(uint32_t rune) {
  if (rune < 0x80) return rune >= 0x20 && rune < 0x7f;
  const auto* it =
      std::upper_bound(std::begin(kPrintableRanges), std::end(kPrintableRanges), rune,
                       [](uint32_t r, const RuneRange& range) { return r < range.first; });
  return it != std::begin(kPrintableRanges) && rune <= std::prev(it)->last;
}

struct DecodedRune {
  uint32_t rune;
  size_t width;  // 0 marks an invalid byte (consumes one byte)
};

// UTF-8 decoding with Go's utf8.DecodeRuneInString acceptance rules: no overlong forms, no
// surrogates, nothing above U+10FFFF.
DecodedRune decodeRune(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  size_t width = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  uint32_t rune = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    width = 2;
    rune = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    width = 3;
    rune = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    width = 4;
    rune = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {0, 0};
  }
  if (s.size() < width) return {0, 0};
  for (size_t i = 1; i < width; ++i) {
    const unsigned char b = byte(i);
    if (b < lo || b > hi) return {0, 0};
    lo = 0x80;
    hi = 0xBF;
    rune = (rune << 6) | (b & 0x3F);
  }
  return {rune, width};
}

void appendHex(std::string& out, uint32_t value, int digits) {
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    out += kLowerHex[(value >> shift) & 0xF];
}

void appendEscapedRune(std::string& out, uint32_t rune, std::string_view raw) {
  if (rune == '"' || rune == '\\') {
    out += '\\';
    out += static_cast<char>(rune);
    return;
  }
  if (isPrintable(rune)) {
    out += raw;
    return;
  }
  switch (rune) {
    case '\a':
      out += "\\a";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\v':
      out += "\\v";
      return;
    default:
      break;
  }
  if (rune < ' ' || rune == 0x7f) {
    out += "\\x";
    appendHex(out, rune, 2);
  } else if (rune < 0x10000) {
    out += "\\u";
    appendHex(out, rune, 4);
  } else {
    out += "\\U";
    appendHex(out, rune, 8);
  }
}

}  // namespace

bool isValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const DecodedRune decoded = decodeRune(text.substr(i));
    if (decoded.width == 0) return false;
    i += decoded.width;
  }
  return true;
}

std::string goQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  while (!text.empty()) {
    DecodedRune decoded{static_cast<unsigned char>(text[0]), 1};
    if (decoded.rune >= 0x80) decoded = decodeRune(text);
    if (decoded.width == 0) {
      out += "\\x";
      appendHex(out, static_cast<unsigned char>(text[0]), 2);
      text.remove_prefix(1);
      continue;
    }
    appendEscapedRune(out, decoded.rune, text.substr(0, decoded.width));
    text.remove_prefix(decoded.width);
  }
  out += '"';
  return out;
}

std::string regexQuoteMeta(std::string_view text) {
  constexpr std::string_view kSpecial = R"(\.+*?()|[]{}^$)";
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) {
    if (kSpecial.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace gpuscale::core
