#include "gpuscale/prom/discovery.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

std::string quoteLabelValue(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

bool isTransient(const Status& status) { return status.httpCode() == 503; }

// Label names for each metric, `concurrency` calls in flight. Stops issuing calls after the first
// error.
Result<MetricLabelNames> labelNamesPerMetric(Client& client, std::string_view seriesQuery,
                                             const std::vector<std::string>& names,
                                             const TimeRange& window, size_t concurrency) {
  std::vector<std::string> selectors;
  selectors.reserve(names.size());
  for (const auto& name : names) {
    auto selector = restrictToMetric(seriesQuery, name);
    if (!selector) return selector.status();
    selectors.push_back(std::move(*selector));
  }
  std::mutex mutex;
  std::condition_variable idle;
  size_t inFlight = 0;
  Status firstError;
  MetricLabelNames out;
  for (size_t i = 0; i < names.size(); ++i) {
    {
      std::unique_lock lock(mutex);
      idle.wait(lock, [&] { return inFlight < std::max<size_t>(1, concurrency); });
      if (!firstError.ok()) break;
      ++inFlight;
    }
    client.labelNamesAsync({selectors[i]}, window,
                           [&, name = names[i]](Result<std::vector<std::string>> labels) {
                             std::lock_guard lock(mutex);
                             if (!labels) {
                               if (firstError.ok()) firstError = labels.status();
                             } else {
                               auto& target = out[name];
                               for (auto& label : *labels) {
                                 if (label != "__name__") target.push_back(std::move(label));
                               }
                               std::sort(target.begin(), target.end());
                             }
                             --inFlight;
                             idle.notify_all();
                           });
  }
  std::unique_lock lock(mutex);
  idle.wait(lock, [&] { return inFlight == 0; });
  if (!firstError.ok()) return firstError;
  return out;
}

}  // namespace

Result<std::string> restrictToMetric(std::string_view seriesQuery, std::string_view name) {
  std::string_view query = trim(seriesQuery);
  auto open = query.find('{');
  std::string_view prefix = trim(query.substr(0, open));
  if (open == std::string_view::npos) {
    if (prefix == name) return std::string(query);
    return Status::badRequest("series query \"" + std::string(seriesQuery) + "\" does not select " +
                              std::string(name));
  }
  if (query.back() != '}') {
    return Status::badRequest("series query \"" + std::string(seriesQuery) +
                              "\" is not a series selector");
  }
  if (!prefix.empty()) {
    if (prefix == name) return std::string(query);
    return Status::badRequest("series query \"" + std::string(seriesQuery) + "\" does not select " +
                              std::string(name));
  }
  std::string_view inner = trim(query.substr(open + 1, query.size() - open - 2));
  std::string out = "{__name__=" + quoteLabelValue(name);
  if (!inner.empty()) out += "," + std::string(inner);
  return out + "}";
}

MetricLabelNames labelNamesOf(const std::vector<Series>& series) {
  MetricLabelNames out;
  for (const auto& labels : series) {
    auto name = labels.find("__name__");
    if (name == labels.end()) continue;
    auto& target = out[name->second];
    for (const auto& [label, value] : labels) {
      if (label != "__name__") target.push_back(label);
    }
  }
  for (auto& [name, labels] : out) {
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  }
  return out;
}

Result<MetricLabelNames> discoverLabelNamesFromSeries(Client& client, std::string_view seriesQuery,
                                                      const TimeRange& window) {
  auto series = client.series({std::string(seriesQuery)}, window);
  if (!series) return series.status();
  return labelNamesOf(*series);
}

Result<MetricLabelNames> discoverLabelNames(Client& client, std::string_view seriesQuery,
                                            const TimeRange& window,
                                            const DiscoveryOptions& options,
                                            DiscoveryReport* report) {
  DiscoveryReport local;
  DiscoveryReport& r = report ? *report : local;
  r = {};
  auto useFallback = [&](const Status& status) {
    return options.fallbackToSeries && !isTransient(status) && failureKindOf(status).has_value();
  };
  auto fallback = [&]() {
    r.usedSeriesFallback = true;
    ++r.calls;
    return discoverLabelNamesFromSeries(client, seriesQuery, window);
  };
  ++r.calls;
  auto names = client.labelValues("__name__", {std::string(seriesQuery)}, window);
  if (!names) return useFallback(names.status()) ? fallback() : names.status();
  r.calls += names->size();
  auto labels = labelNamesPerMetric(client, seriesQuery, *names, window, options.concurrency);
  if (!labels && useFallback(labels.status())) return fallback();
  return labels;
}

}  // namespace gpuscale::prom
