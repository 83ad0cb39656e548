#include "response_decoder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <streambuf>

#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace {

using json = nlohmann::json;
constexpr size_t kSnippetBytes = 200;

std::string snippet(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, kSnippetBytes)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (body.size() > kSnippetBytes) out += "...";
  return out;
}

core::Status badJson(std::string_view what) { return failure(FailureKind::kBadJson, what); }

// Go's strconv.ParseFloat as Prometheus' sample values need it: decimal, exponent, NaN, ±Inf.
bool parseValue(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Prometheus sends Unix seconds with millisecond precision. A time the clock cannot hold (its
// nanoseconds overflow 64 bits past 2262) or NaN is no time Prometheus writes: it is clamped to the
// clock's range (NaN reads as the epoch) instead of overflowing the conversion.
Timestamp toTimestamp(double seconds) {
  constexpr double kLimit = 9'000'000'000.0;  // about year 2255, inside the clock's range
  if (std::isnan(seconds)) seconds = 0;
  seconds = std::clamp(seconds, -kLimit, kLimit);
  return Timestamp(std::chrono::milliseconds(std::llround(seconds * 1000.0)));
}

// The keys the decoder acts on; every other key is kOther.
enum class Key {
  kNone,
  kOther,
  kStatus,
  kData,
  kErrorType,
  kError,
  kWarnings,
  kResultType,
  kResult,
  kMetric,
  kValue,
  kValues,
  kHistogram
};

Key keyOf(std::string_view text) {
  static constexpr std::pair<std::string_view, Key> kKeys[] = {
      {"status", Key::kStatus}, {"data", Key::kData},          {"errorType", Key::kErrorType},
      {"error", Key::kError},   {"warnings", Key::kWarnings},  {"resultType", Key::kResultType},
      {"result", Key::kResult}, {"metric", Key::kMetric},      {"value", Key::kValue},
      {"values", Key::kValues}, {"histogram", Key::kHistogram}};
  for (const auto& [name, key] : kKeys) {
    if (name == text) return key;
  }
  return Key::kOther;
}

// One element of a vector or matrix result, before the result type is known.
struct Element {
  Labels metric;
  std::optional<Point> value;
  std::vector<Point> values;
  bool histogram = false;
};

// A [<time>, "<text>"] pair being read.
struct Pair {
  std::optional<double> time;
  std::optional<std::string> text;
  bool extra = false;
};

class Handler : public nlohmann::json_sax<json> {
 public:
  explicit Handler(ResponseShape shape) : shape_(shape) {}

  bool null() override { return scalar(nullptr, nullptr, true); }
  bool boolean(bool) override { return scalar(nullptr, nullptr, false); }
  bool number_integer(number_integer_t v) override {
    double d = static_cast<double>(v);
    return scalar(&d, nullptr, false);
  }
  bool number_unsigned(number_unsigned_t v) override {
    double d = static_cast<double>(v);
    return scalar(&d, nullptr, false);
  }
  bool number_float(number_float_t v, const string_t&) override {
    return scalar(&v, nullptr, false);
  }
  bool string(string_t& v) override { return scalar(nullptr, &v, false); }
  bool binary(binary_t&) override { return scalar(nullptr, nullptr, false); }

  bool start_object(std::size_t) override {
    size_t depth = stack_.size();
    if (depth == 0) rootIsObject = true;
    if (depth == 1 && stack_[0].key == Key::kData) dataKind = 'o';
    if (seriesShape() && depth == 2 && stack_[0].key == Key::kData && !stack_[1].object) {
      series.emplace_back();
    }
    if (inResultArray()) elements.emplace_back();
    stack_.push_back({true, Key::kNone, 0});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = keyOf(k);
    currentKey_ = std::move(k);
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    // One label set read: fold it into the view and reuse its slot.
    if (shape_ == ResponseShape::kSeriesLabelNames && stack_.size() == 2 &&
        stack_[0].key == Key::kData && !stack_[1].object && !series.empty()) {
      labelNames.add(series.back());
      series.pop_back();
    }
    finishChild();
    return true;
  }
  bool start_array(std::size_t) override {
    size_t depth = stack_.size();
    if (depth == 1 && stack_[0].key == Key::kData) dataKind = 'a';
    if (depth == 2 && inResult()) resultKind = 'a';
    if ((depth == 2 && inResult()) ||
        (depth == 4 && (inElementField(Key::kValue) || inElementField(Key::kHistogram))) ||
        (depth == 5 && inElementField(Key::kValues))) {
      pair_ = Pair{};
    }
    stack_.push_back({false, Key::kNone, 0});
    return true;
  }
  bool end_array() override {
    size_t items = stack_.back().index;
    stack_.pop_back();
    if (stack_.size() == 2 && inResult()) resultItems = items;
    if (!closePair()) return false;
    finishChild();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    syntaxError = true;
    return false;
  }

  // What was read, checked by decodeResponse().
  bool syntaxError = false;
  bool rootIsObject = false;
  std::optional<std::string> status, errorType, error, resultType;
  std::vector<std::string> warnings;
  char dataKind = 0;    // 'o' object, 'a' array, 'n' null, 's' another scalar
  char resultKind = 0;  // 'a' array, 's' anything else
  size_t resultItems = 0;
  std::vector<Series> series;
  MetricLabelNamesBuilder labelNames;  // kSeriesLabelNames
  std::vector<std::string> strings;
  std::vector<Element> elements;
  Pair resultPair;
  core::Status failed;

 private:
  struct Frame {
    bool object;
    Key key;       // objects: the key of the member being read
    size_t index;  // arrays: the index of the item being read
  };

  bool seriesShape() const {
    return shape_ == ResponseShape::kSeries || shape_ == ResponseShape::kSeriesLabelNames;
  }
  bool inResult() const {
    return shape_ == ResponseShape::kQuery && stack_.size() >= 2 && stack_[0].key == Key::kData &&
           stack_[1].object && stack_[1].key == Key::kResult;
  }
  // Directly inside the result array.
  bool inResultArray() const { return stack_.size() == 3 && inResult() && !stack_[2].object; }
  // Inside the member `field` of a result element.
  bool inElementField(Key field) const {
    return stack_.size() >= 4 && inResult() && !stack_[2].object && stack_[3].object &&
           stack_[3].key == field;
  }

  bool fail(core::Status status) {
    failed = std::move(status);
    return false;
  }

  void finishChild() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    if (inResultArray() && !elements.empty() && elements.back().histogram &&
        !elements.back().value) {
      // A native histogram has no single value; NaN keeps it from passing as 0.
      elements.back().value = Point{histogramTime_, std::nan("")};
    }
  }

  // Stores a finished [<time>, "<text>"] pair where it belongs (called when an array closes).
  bool closePair() {
    size_t depth = stack_.size();
    if (depth == 4 && inElementField(Key::kValue)) {
      auto point = toPoint();
      if (!point) return false;
      elements.back().value = *point;
    } else if (depth == 4 && inElementField(Key::kHistogram)) {
      if (!pair_.time) return fail(badJson("a histogram sample has no time"));
      elements.back().histogram = true;
      histogramTime_ = toTimestamp(*pair_.time);
    } else if (depth == 5 && inElementField(Key::kValues)) {
      auto point = toPoint();
      if (!point) return false;
      elements.back().values.push_back(*point);
    } else if (depth == 2 && inResult()) {
      resultPair = std::move(pair_);
    }
    return true;
  }

  std::optional<Point> toPoint() {
    if (!pair_.time || !pair_.text || pair_.extra) {
      fail(badJson("a sample is not [<time>, \"<value>\"]"));
      return std::nullopt;
    }
    Point point{toTimestamp(*pair_.time), 0};
    if (!parseValue(*pair_.text, point.value)) {
      fail(badJson("sample value \"" + snippet(*pair_.text) + "\""));
      return std::nullopt;
    }
    return point;
  }

  void addToPair(const double* number, std::string* text) {
    size_t index = stack_.back().index;
    if (index == 0 && number) {
      pair_.time = *number;
    } else if (index == 1 && text) {
      pair_.text = std::move(*text);
    } else {
      pair_.extra = true;
    }
  }

  bool scalar(const double* number, std::string* text, bool isNull) {
    if (!place(number, text, isNull)) return false;
    finishChild();
    return true;
  }

  bool place(const double* number, std::string* text, bool isNull) {
    size_t depth = stack_.size();
    if (depth == 0) return true;  // a bare scalar body: rootIsObject stays false
    const Frame& top = stack_.back();
    if (depth == 1) {
      std::optional<std::string>* field = top.key == Key::kStatus      ? &status
                                          : top.key == Key::kErrorType ? &errorType
                                          : top.key == Key::kError     ? &error
                                                                       : nullptr;
      if (field && text) *field = std::move(*text);
      if (top.key == Key::kData) dataKind = isNull ? 'n' : 's';
      return true;
    }
    if (depth == 2 && stack_[0].key == Key::kWarnings && !top.object) {
      if (text) warnings.push_back(std::move(*text));
      return true;
    }
    if (stack_[0].key != Key::kData) return true;
    switch (shape_) {
      case ResponseShape::kStringList:
        if (depth != 2 || top.object) return true;
        if (!text) return fail(badJson("a label name or value is not a string"));
        strings.push_back(std::move(*text));
        return true;
      case ResponseShape::kSeries:
      case ResponseShape::kSeriesLabelNames:
        if (depth == 2 && !top.object) return fail(badJson("a label set is not an object"));
        if (depth != 3 || !top.object || stack_[1].object) return true;
        if (!text) return fail(badJson("label \"" + snippet(currentKey_) + "\" is not a string"));
        series.back().emplace_hint(series.back().end(), std::move(currentKey_), std::move(*text));
        return true;
      case ResponseShape::kQuery:
        break;
    }
    if (depth == 2 && top.object) {
      if (top.key == Key::kResultType && text) resultType = std::move(*text);
      if (top.key == Key::kResult) resultKind = 's';
      return true;
    }
    if (!inResult()) return true;
    if (depth == 3 && !top.object) {
      addToPair(number, text);
    } else if (depth == 5 && top.object && stack_[3].key == Key::kMetric) {
      if (!text) return fail(badJson("label \"" + snippet(currentKey_) + "\" is not a string"));
      elements.back().metric.emplace_hint(elements.back().metric.end(), std::move(currentKey_),
                                          std::move(*text));
    } else if (!top.object &&
               ((depth == 5 && (inElementField(Key::kValue) || inElementField(Key::kHistogram))) ||
                (depth == 6 && inElementField(Key::kValues)))) {
      addToPair(number, text);
    }
    return true;
  }

  ResponseShape shape_;
  std::vector<Frame> stack_;
  std::string currentKey_;
  Pair pair_;
  Timestamp histogramTime_;
};

// A body arriving in pieces as a std::streambuf for nlohmann's stream input; keeps the first bytes
// for error messages.
class PieceBuffer : public std::streambuf {
 public:
  explicit PieceBuffer(const BodyPieces& next) : next_(next) {}

  // The first bytes of the body (enough for snippet()), reading more pieces while there are fewer.
  // Called after the parse: every piece read so far is already in head_.
  std::string_view head() {
    while (head_.size() <= kSnippetBytes) {
      setg(nullptr, nullptr, nullptr);
      if (underflow() == traits_type::eof()) break;
    }
    return head_;
  }

 protected:
  int_type underflow() override {
    if (gptr() != egptr()) return traits_type::to_int_type(*gptr());
    std::string_view piece = next_();
    if (piece.empty()) return traits_type::eof();
    if (head_.size() <= kSnippetBytes) {
      head_.append(piece.substr(0, kSnippetBytes + 1 - head_.size()));
    }
    // nlohmann only reads through gptr(); the piece stays valid until the next call of next_.
    char* data = const_cast<char*>(piece.data());
    setg(data, data, data + piece.size());
    return traits_type::to_int_type(*data);
  }

 private:
  const BodyPieces& next_;
  std::string head_;
};

// The checks and conversions of decodeResponse, over a body that `read` parses into the Handler it
// is given (null: only the first bytes are wanted); `read` returns the body's first bytes.
template <typename Read>
core::Status decode(int httpStatus, ResponseShape shape, DecodedResponse& out, Read read) {
  bool success = httpStatus >= 200 && httpStatus < 300;
  bool transientStatus = httpStatus == 502 || httpStatus == 503 || httpStatus == 504;
  if (!success && httpStatus != 400 && httpStatus != 422 && httpStatus != 503) {
    return failure(
        FailureKind::kHttpStatus,
        "unknown response code " + std::to_string(httpStatus) + ": " + snippet(read(nullptr)),
        transientStatus);
  }
  Handler h(shape);
  std::string_view body = read(&h);
  if (!h.failed.ok()) return h.failed;
  if (h.syntaxError || !h.rootIsObject) {
    if (!success) {
      return failure(
          FailureKind::kHttpStatus,
          "response code " + std::to_string(httpStatus) + " without a JSON body: " + snippet(body),
          transientStatus);
    }
    return badJson("body is not a JSON object: " + snippet(body));
  }
  if (!h.status) return badJson("no \"status\" field");
  if (*h.status == "error") {
    std::string type = h.errorType.value_or("");
    bool transient = type == "timeout" || type == "unavailable" || type == "canceled";
    return failure(FailureKind::kPrometheusError, type + ": " + h.error.value_or(""), transient);
  }
  if (*h.status != "success") return badJson("status is \"" + snippet(*h.status) + "\"");
  if (!success) return badJson("status success with response code " + std::to_string(httpStatus));
  if (h.dataKind == 0) return badJson("no \"data\" field");
  switch (shape) {
    case ResponseShape::kStringList:
      if (h.dataKind != 'a' && h.dataKind != 'n') return badJson("\"data\" is not an array");
      out.strings = std::move(h.strings);
      return core::Status();
    case ResponseShape::kSeries:
      if (h.dataKind != 'a') return badJson("series \"data\" is not an array");
      out.series = std::move(h.series);
      return core::Status();
    case ResponseShape::kSeriesLabelNames:
      if (h.dataKind != 'a') return badJson("series \"data\" is not an array");
      out.labelNames = h.labelNames.take();
      return core::Status();
    case ResponseShape::kQuery:
      break;
  }
  if (h.dataKind != 'o') return badJson("\"data\" is not an object");
  if (!h.resultType || h.resultKind == 0) return badJson("\"data\" lacks resultType or result");
  QueryResult& result = out.query;
  result.warnings = std::move(h.warnings);
  const std::string& type = *h.resultType;
  if (type == "vector" || type == "matrix") {
    bool vector = type == "vector";
    if (h.resultKind != 'a') return badJson(type + " result is not an array");
    if (h.resultItems != h.elements.size()) return badJson(type + " element is not an object");
    result.type = vector ? ResultType::kVector : ResultType::kMatrix;
    if (vector) result.vector.reserve(h.elements.size());
    if (!vector) result.matrix.reserve(h.elements.size());
    for (auto& element : h.elements) {
      if (!vector) {
        result.matrix.push_back({std::move(element.metric), std::move(element.values)});
      } else if (!element.value) {
        return badJson("vector element has no value");
      } else {
        result.vector.push_back({std::move(element.metric), *element.value});
      }
    }
    return core::Status();
  }
  if (type == "scalar" || type == "string") {
    const Pair& pair = h.resultPair;
    if (h.resultKind != 'a' || h.resultItems != 2 || !pair.time || !pair.text || pair.extra) {
      return badJson(type == "scalar" ? "a sample is not [<time>, \"<value>\"]"
                                      : "string result is not [<time>, \"<text>\"]");
    }
    if (type == "string") {
      result.type = ResultType::kString;
      result.stringTime = toTimestamp(*pair.time);
      result.string = *pair.text;
      return core::Status();
    }
    result.type = ResultType::kScalar;
    result.scalar.timestamp = toTimestamp(*pair.time);
    if (!parseValue(*pair.text, result.scalar.value)) {
      return badJson("sample value \"" + snippet(*pair.text) + "\"");
    }
    return core::Status();
  }
  return failure(FailureKind::kUnexpectedResultType, "\"" + snippet(type) + "\"");
}

}  // namespace

core::Status decodeResponse(int httpStatus, std::string_view body, ResponseShape shape,
                            DecodedResponse& out) {
  return decode(httpStatus, shape, out, [&](Handler* h) {
    if (h) json::sax_parse(body.begin(), body.end(), h);
    return body;
  });
}

core::Status decodeResponse(int httpStatus, const BodyPieces& next, ResponseShape shape,
                            DecodedResponse& out) {
  PieceBuffer buffer(next);
  return decode(httpStatus, shape, out, [&](Handler* h) {
    if (h) {
      std::istream in(&buffer);
      json::sax_parse(in, h);
    }
    return buffer.head();
  });
}

}  // namespace gpuscale::prom
