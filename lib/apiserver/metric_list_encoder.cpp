// Direct text encoders for the metric value lists: the request hot path. They write the same bytes
// as encodeJson(metricValueListJson(...)) without building a JSON tree (the tree costs most of a
// request's allocations). Pretty output is rare and goes through the tree.
#include <chrono>
#include <ctime>

#include "gpuscale/apiserver/wire_format.h"

namespace gpuscale::apiserver {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence at text[i], or 0 when the byte starts no valid sequence.
size_t utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t length;
  uint32_t codepoint;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
    codepoint = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    codepoint = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    codepoint = c & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    codepoint = (codepoint << 6) | (byte(i + k) & 0x3F);
  }
  const bool overlong = (length == 3 && codepoint < 0x800) || (length == 4 && codepoint < 0x10000);
  const bool surrogate = codepoint >= 0xD800 && codepoint <= 0xDFFF;
  if (overlong || surrogate || codepoint > 0x10FFFF) return 0;
  return length;
}

void appendField(std::string& out, std::string_view name, std::string_view value) {
  out.push_back('"');
  out.append(name);
  out.append("\":");
  appendJsonString(out, value);
}

// formatTimestamp() memoised per thread: all items of a response usually share one second.
const std::string& cachedTimestamp(Timestamp at) {
  thread_local std::chrono::seconds lastSecond{-1};
  thread_local std::string lastText;
  const auto second = std::chrono::floor<std::chrono::seconds>(at).time_since_epoch();
  if (second != lastSecond) {
    lastText = formatTimestamp(at);
    lastSecond = second;
  }
  return lastText;
}

void appendObjectReference(std::string& out, const ObjectReference& ref) {
  out.append("{");
  bool first = true;
  const auto field = [&](std::string_view name, const std::string& value) {
    if (value.empty()) return;
    if (!first) out.push_back(',');
    first = false;
    appendField(out, name, value);
  };
  field("kind", ref.kind);
  field("namespace", ref.namespaceName);
  field("name", ref.name);
  field("apiVersion", ref.apiVersion);
  out.append("}");
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8Length(text, i);
      if (length == 0) {
        out.append("\xEF\xBF\xBD");
      } else if (length == 3 && c == 0xE2 && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
                 (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
                  static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
        out.append(static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029");
        i += 2;
      } else {
        out.append(text.substr(i, length));
        i += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '<':
        out.append("\\u003c");
        break;
      case '>':
        out.append("\\u003e");
        break;
      case '&':
        out.append("\\u0026");
        break;
      default:
        if (c < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

core::Result<std::string> encodeMetricValueList(std::string_view version,
                                                const std::vector<MetricValue>& items,
                                                bool pretty) {
  if (pretty) {
    auto document = metricValueListJson(version, items);
    if (!document) return document.status();
    return encodeJson(*document, true);
  }
  const bool v1beta1 = version == "v1beta1";
  std::string out;
  out.reserve(128 + items.size() * 256);
  out.append(R"({"kind":"MetricValueList","apiVersion":)");
  appendJsonString(out, std::string(kCustomMetricsGroup) + "/" + std::string(version));
  out.append(R"(,"metadata":{},"items":[)");
  for (size_t i = 0; i < items.size(); ++i) {
    const MetricValue& item = items[i];
    std::string selector = "null";
    if (item.selector && !item.selector->empty()) {
      auto json = labelSelectorJson(*item.selector);
      if (!json) return json.status();
      selector = encodeJson(*json, false);
      selector.pop_back();  // encodeJson's trailing newline
    }
    if (i > 0) out.push_back(',');
    out.append(R"({"describedObject":)");
    appendObjectReference(out, item.describedObject);
    if (v1beta1) {
      out.append(",");
      appendField(out, "metricName", item.metricName);
    } else {
      out.append(R"(,"metric":{"name":)");
      appendJsonString(out, item.metricName);
      out.append(R"(,"selector":)").append(selector).append("}");
    }
    out.append(R"(,"timestamp":")").append(cachedTimestamp(item.timestamp)).append("\"");
    if (item.windowSeconds) {
      out.append(v1beta1 ? R"(,"window":)" : R"(,"windowSeconds":)")
          .append(std::to_string(*item.windowSeconds));
    }
    out.append(",");
    appendField(out, "value", item.value.toString());
    if (v1beta1) out.append(R"(,"selector":)").append(selector);
    out.append("}");
  }
  out.append("]}\n");
  return out;
}

std::string encodeExternalMetricValueList(const std::vector<ExternalMetricValue>& items,
                                          bool pretty) {
  if (pretty) return encodeJson(externalMetricValueListJson(items), true);
  std::string out;
  out.reserve(128 + items.size() * 192);
  out.append(
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[)");
  for (size_t i = 0; i < items.size(); ++i) {
    const ExternalMetricValue& item = items[i];
    if (i > 0) out.push_back(',');
    out.append("{");
    appendField(out, "metricName", item.metricName);
    out.append(R"(,"metricLabels":)");
    if (!item.metricLabels) {
      out.append("null");
    } else {
      out.append("{");
      bool first = true;
      for (const auto& [key, value] : *item.metricLabels) {
        if (!first) out.push_back(',');
        first = false;
        appendJsonString(out, key);
        out.push_back(':');
        appendJsonString(out, value);
      }
      out.append("}");
    }
    out.append(R"(,"timestamp":")").append(cachedTimestamp(item.timestamp)).append("\"");
    if (item.windowSeconds) out.append(R"(,"window":)").append(std::to_string(*item.windowSeconds));
    out.append(",");
    appendField(out, "value", item.value.toString());
    out.append("}");
  }
  out.append("]}\n");
  return out;
}

}  // namespace gpuscale::apiserver
