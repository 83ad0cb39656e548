#include "gpuscale/prom/wire.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "gpuscale/prom/errors.h"
#include "response_decoder.h"

namespace gpuscale::prom {
namespace {

bool isUnreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

std::string escape(std::string_view text, bool spaceAsPlus) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (unsigned char c : text) {
    if (isUnreserved(c)) {
      out += static_cast<char>(c);
    } else if (c == ' ' && spaceAsPlus) {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string formatTime(Timestamp t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  bool negative = ms < 0;
  unsigned long long magnitude = negative ? 0ULL - static_cast<unsigned long long>(ms) : ms;
  std::string out = (negative ? "-" : "") + std::to_string(magnitude / 1000);
  if (unsigned fraction = magnitude % 1000; fraction != 0) {
    std::string digits = std::to_string(fraction + 1000).substr(1);
    digits.erase(digits.find_last_not_of('0') + 1);
    out += '.' + digits;
  }
  return out;
}

std::string formatTimeout(core::Duration d) {
  auto ms =
      std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string queryEscape(std::string_view text) { return escape(text, true); }

std::string pathEscape(std::string_view text) { return escape(text, false); }

std::string encodeParams(Params params) {
  std::stable_sort(params.begin(), params.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [key, value] : params) {
    if (!out.empty()) out += '&';
    out += queryEscape(key);
    out += '=';
    out += queryEscape(value);
  }
  return out;
}

std::string joinPath(std::string_view base, std::string_view path) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  std::string out(base);
  if (out.empty() || out.front() != '/') out.insert(out.begin(), '/');
  if (out.size() > 1 || !path.empty()) {
    if (out.back() != '/') out += '/';
  }
  out += path;
  return out;
}

Params queryParams(std::string_view promql, Timestamp at, core::Duration timeout) {
  Params params = {{"query", std::string(promql)}, {"time", formatTime(at)}};
  if (timeout > core::Duration::zero()) params.emplace_back("timeout", formatTimeout(timeout));
  return params;
}

Params matchParams(const Matchers& match, const TimeRange& window) {
  Params params;
  for (const auto& m : match) params.emplace_back("match[]", m);
  if (window.start) params.emplace_back("start", formatTime(*window.start));
  if (window.end) params.emplace_back("end", formatTime(*window.end));
  return params;
}

Result<QueryResultPtr> decodeQueryResponse(int httpStatus, std::string_view body) {
  DecodedResponse decoded;
  if (Status s = decodeResponse(httpStatus, body, ResponseShape::kQuery, decoded); !s.ok())
    return s;
  return QueryResultPtr(std::make_shared<QueryResult>(std::move(decoded.query)));
}

Result<std::vector<Series>> decodeSeriesResponse(int httpStatus, std::string_view body) {
  DecodedResponse decoded;
  if (Status s = decodeResponse(httpStatus, body, ResponseShape::kSeries, decoded); !s.ok()) {
    return s;
  }
  return std::move(decoded.series);
}

Result<MetricLabelNames> decodeSeriesLabelNamesResponse(int httpStatus, std::string_view body) {
  bool given = false;
  return decodeSeriesLabelNamesResponse(httpStatus, [&] {
    std::string_view piece = given ? std::string_view() : body;
    given = true;
    return piece;
  });
}

Result<MetricLabelNames> decodeSeriesLabelNamesResponse(int httpStatus, const BodyPieces& next) {
  DecodedResponse decoded;
  if (Status s = decodeResponse(httpStatus, next, ResponseShape::kSeriesLabelNames, decoded);
      !s.ok()) {
    return s;
  }
  return std::move(decoded.labelNames);
}

Result<std::vector<std::string>> decodeStringListResponse(int httpStatus, std::string_view body) {
  DecodedResponse decoded;
  if (Status s = decodeResponse(httpStatus, body, ResponseShape::kStringList, decoded); !s.ok()) {
    return s;
  }
  return std::move(decoded.strings);
}

}  // namespace gpuscale::prom
