#include "gpuscale/prom/wire.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace {

using nlohmann::json;

constexpr size_t kSnippetBytes = 200;

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

// A printable excerpt of a body for error messages.
std::string snippet(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, kSnippetBytes)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (body.size() > kSnippetBytes) out += "...";
  return out;
}

Status badJson(std::string_view what) { return failure(FailureKind::kBadJson, what); }

// Go's strconv.ParseFloat as Prometheus' sample values need it: decimal, exponent, NaN, ±Inf.
bool parseValue(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Timestamp toTimestamp(double seconds) {
  return Timestamp(std::chrono::milliseconds(std::llround(seconds * 1000.0)));
}

// `[<unix seconds>, "<value>"]`.
Result<Point> decodePoint(const json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) {
    return badJson("a sample is not [<time>, \"<value>\"]");
  }
  Point point;
  point.timestamp = toTimestamp(pair[0].get<double>());
  const auto& text = pair[1].get_ref<const std::string&>();
  if (!parseValue(text, point.value)) return badJson("sample value \"" + snippet(text) + "\"");
  return point;
}

Result<Labels> decodeLabels(const json& object) {
  if (!object.is_object()) return badJson("a label set is not an object");
  Labels labels;
  for (const auto& [name, value] : object.items()) {
    if (!value.is_string()) return badJson("label \"" + snippet(name) + "\" is not a string");
    labels.emplace_hint(labels.end(), name, value.get<std::string>());
  }
  return labels;
}

Status decodeVector(const json& result, QueryResult& out) {
  if (!result.is_array()) return badJson("vector result is not an array");
  out.vector.reserve(result.size());
  for (const auto& element : result) {
    if (!element.is_object()) return badJson("vector element is not an object");
    Sample sample;
    if (auto it = element.find("metric"); it != element.end()) {
      auto labels = decodeLabels(*it);
      if (!labels) return labels.status();
      sample.metric = std::move(*labels);
    }
    if (auto it = element.find("value"); it != element.end()) {
      auto point = decodePoint(*it);
      if (!point) return point.status();
      sample.point = *point;
    } else if (auto h = element.find("histogram");
               h != element.end() && h->is_array() && h->size() == 2 && (*h)[0].is_number()) {
      // A native histogram has no single value; NaN keeps it from passing as 0.
      sample.point = {toTimestamp((*h)[0].get<double>()), std::nan("")};
    } else {
      return badJson("vector element has no value");
    }
    out.vector.push_back(std::move(sample));
  }
  return Status();
}

Status decodeMatrix(const json& result, QueryResult& out) {
  if (!result.is_array()) return badJson("matrix result is not an array");
  out.matrix.reserve(result.size());
  for (const auto& element : result) {
    if (!element.is_object()) return badJson("matrix element is not an object");
    RangeSeries series;
    if (auto it = element.find("metric"); it != element.end()) {
      auto labels = decodeLabels(*it);
      if (!labels) return labels.status();
      series.metric = std::move(*labels);
    }
    if (auto it = element.find("values"); it != element.end()) {
      if (!it->is_array()) return badJson("matrix values are not an array");
      series.points.reserve(it->size());
      for (const auto& pair : *it) {
        auto point = decodePoint(pair);
        if (!point) return point.status();
        series.points.push_back(*point);
      }
    }
    out.matrix.push_back(std::move(series));
  }
  return Status();
}

struct Envelope {
  json data;
  std::vector<std::string> warnings;
};

// Checks the envelope and returns its `data` member (moved out of the parsed document).
Result<Envelope> decodeEnvelope(int httpStatus, std::string_view body) {
  bool success = httpStatus >= 200 && httpStatus < 300;
  bool transientStatus = httpStatus == 502 || httpStatus == 503 || httpStatus == 504;
  if (!success && httpStatus != 400 && httpStatus != 422 && httpStatus != 503) {
    return failure(FailureKind::kHttpStatus,
                   "unknown response code " + std::to_string(httpStatus) + ": " + snippet(body),
                   transientStatus);
  }
  json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    if (!success) {
      return failure(
          FailureKind::kHttpStatus,
          "response code " + std::to_string(httpStatus) + " without a JSON body: " + snippet(body),
          transientStatus);
    }
    return badJson("body is not a JSON object: " + snippet(body));
  }
  auto status = document.find("status");
  if (status == document.end() || !status->is_string()) return badJson("no \"status\" field");
  if (*status == "error") {
    std::string type = document.value("errorType", "");
    std::string message = document.value("error", "");
    bool transient = type == "timeout" || type == "unavailable" || type == "canceled";
    return failure(FailureKind::kPrometheusError, type + ": " + message, transient);
  }
  if (*status != "success") return badJson("status is \"" + snippet(status->dump()) + "\"");
  if (!success) return badJson("status success with response code " + std::to_string(httpStatus));
  auto data = document.find("data");
  if (data == document.end()) return badJson("no \"data\" field");
  Envelope envelope{std::move(*data), {}};
  if (auto warnings = document.find("warnings");
      warnings != document.end() && warnings->is_array()) {
    for (const auto& warning : *warnings) {
      if (warning.is_string()) envelope.warnings.push_back(warning.get<std::string>());
    }
  }
  return envelope;
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
  auto envelope = decodeEnvelope(httpStatus, body);
  if (!envelope) return envelope.status();
  json* data = &envelope->data;
  if (!data->is_object()) return badJson("\"data\" is not an object");
  auto type = data->find("resultType");
  auto result = data->find("result");
  if (type == data->end() || !type->is_string() || result == data->end()) {
    return badJson("\"data\" lacks resultType or result");
  }
  auto out = std::make_shared<QueryResult>();
  Status status;
  if (*type == "vector") {
    out->type = ResultType::kVector;
    status = decodeVector(*result, *out);
  } else if (*type == "matrix") {
    out->type = ResultType::kMatrix;
    status = decodeMatrix(*result, *out);
  } else if (*type == "scalar") {
    out->type = ResultType::kScalar;
    auto point = decodePoint(*result);
    if (point) out->scalar = *point;
    status = point.status();
  } else if (*type == "string") {
    out->type = ResultType::kString;
    if (!result->is_array() || result->size() != 2 || !(*result)[0].is_number() ||
        !(*result)[1].is_string()) {
      status = badJson("string result is not [<time>, \"<text>\"]");
    } else {
      out->stringTime = toTimestamp((*result)[0].get<double>());
      out->string = (*result)[1].get<std::string>();
    }
  } else {
    status = failure(FailureKind::kUnexpectedResultType, "\"" + snippet(type->dump()) + "\"");
  }
  if (!status.ok()) return status;
  out->warnings = std::move(envelope->warnings);
  return QueryResultPtr(std::move(out));
}

Result<std::vector<Series>> decodeSeriesResponse(int httpStatus, std::string_view body) {
  auto envelope = decodeEnvelope(httpStatus, body);
  if (!envelope) return envelope.status();
  json* data = &envelope->data;
  if (!data->is_array()) return badJson("series \"data\" is not an array");
  std::vector<Series> out;
  out.reserve(data->size());
  for (const auto& element : *data) {
    auto labels = decodeLabels(element);
    if (!labels) return labels.status();
    out.push_back(std::move(*labels));
  }
  return out;
}

Result<std::vector<std::string>> decodeStringListResponse(int httpStatus, std::string_view body) {
  auto envelope = decodeEnvelope(httpStatus, body);
  if (!envelope) return envelope.status();
  json* data = &envelope->data;
  if (data->is_null()) return std::vector<std::string>{};
  if (!data->is_array()) return badJson("\"data\" is not an array");
  std::vector<std::string> out;
  out.reserve(data->size());
  for (auto& element : *data) {
    if (!element.is_string()) return badJson("a label name or value is not a string");
    out.push_back(std::move(element.get_ref<std::string&>()));
  }
  return out;
}

}  // namespace gpuscale::prom
