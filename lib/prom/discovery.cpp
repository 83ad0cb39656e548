#include "gpuscale/prom/discovery.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "gpuscale/prom/errors.h"
#include "text.h"

namespace gpuscale::prom {
namespace {

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

// The parts of a series selector: the metric name before the braces and the matchers inside them.
struct SelectorParts {
  std::string_view name;
  std::string_view matchers;
};

Result<SelectorParts> splitSelector(std::string_view seriesQuery) {
  std::string_view query = trimSpace(seriesQuery);
  auto open = query.find('{');
  if (open == std::string_view::npos) {
    if (query.empty()) return Status::badRequest("empty series query");
    return SelectorParts{query, {}};
  }
  if (query.back() != '}') {
    return Status::badRequest("series query \"" + std::string(seriesQuery) +
                              "\" is not a series selector");
  }
  return SelectorParts{trimSpace(query.substr(0, open)),
                       trimSpace(query.substr(open + 1, query.size() - open - 2))};
}

std::string joinSelector(std::string_view name, std::string_view first, std::string_view rest) {
  std::string out(name);
  out += "{";
  out += first;
  if (!rest.empty()) out += "," + std::string(rest);
  return out + "}";
}

}  // namespace

bool requiresLabel(std::string_view seriesQuery, std::string_view label) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return false;
  std::string_view rest = parts->matchers;
  while (!rest.empty()) {
    // One matcher: name, operator, quoted value (commas inside quotes do not split).
    size_t end = 0;
    char quote = 0;
    for (; end < rest.size(); ++end) {
      char c = rest[end];
      if (quote != 0) {
        if (c == '\\') {
          ++end;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'' || c == '`') {
        quote = c;
      } else if (c == ',') {
        break;
      }
    }
    std::string_view matcher = trimSpace(rest.substr(0, end));
    rest = end < rest.size() ? rest.substr(end + 1) : std::string_view();
    auto op = matcher.find_first_of("!=~");
    if (op == std::string_view::npos || trimSpace(matcher.substr(0, op)) != label) continue;
    std::string_view tail = trimSpace(matcher.substr(op));
    if (tail == "!=\"\"" || tail == "!=''") return true;
    if (tail.size() > 3 && tail[0] == '=' && tail[1] != '~' && tail != "=\"\"" && tail != "=''") {
      return true;
    }
  }
  return false;
}

Result<std::string> addMatcher(std::string_view seriesQuery, std::string_view matcher) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return parts.status();
  return joinSelector(parts->name, matcher, parts->matchers);
}

Result<std::string> restrictToMetric(std::string_view seriesQuery, std::string_view name) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return parts.status();
  if (!parts->name.empty()) {
    if (parts->name == name) return std::string(trimSpace(seriesQuery));
    return Status::badRequest("series query \"" + std::string(seriesQuery) + "\" does not select " +
                              std::string(name));
  }
  return joinSelector("", "__name__=" + quoteLabelValue(name), parts->matchers);
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

namespace {

// Label presence with the base `__name__` call answered already (`knownNames`) or made here. Adds
// the number of calls made to `calls`.
Result<MetricLabelNames> presence(Client& client, std::string_view seriesQuery,
                                  const std::vector<std::string>* knownNames,
                                  const std::vector<std::string>& labels, const TimeRange& window,
                                  size_t& calls) {
  std::vector<std::string> selectors;
  if (!knownNames) selectors.emplace_back(seriesQuery);
  std::vector<std::string> implied;  // labels every matching series has by the query's own matchers
  std::vector<std::string> probed;
  for (const auto& label : labels) {
    if (requiresLabel(seriesQuery, label)) {
      implied.push_back(label);
      continue;
    }
    auto selector = addMatcher(seriesQuery, label + "!=\"\"");
    if (!selector) return selector.status();
    selectors.push_back(std::move(*selector));
    probed.push_back(label);
  }
  std::vector<Result<std::vector<std::string>>> answers(selectors.size(),
                                                        Status::unavailable("not answered"));
  std::mutex mutex;
  std::condition_variable idle;
  size_t pending = selectors.size();
  for (size_t i = 0; i < selectors.size(); ++i) {
    client.labelValuesAsync("__name__", {selectors[i]}, window,
                            [&, i](Result<std::vector<std::string>> names) {
                              std::lock_guard lock(mutex);
                              answers[i] = std::move(names);
                              if (--pending == 0) idle.notify_all();
                            });
  }
  {
    std::unique_lock lock(mutex);
    idle.wait(lock, [&] { return pending == 0; });
  }
  calls += selectors.size();
  for (const auto& answer : answers) {
    if (!answer) return answer.status();
  }
  const std::vector<std::string>& names = knownNames ? *knownNames : *answers[0];
  size_t firstProbe = knownNames ? 0 : 1;
  MetricLabelNames out;
  for (const auto& name : names) out[name] = implied;
  for (size_t i = 0; i < probed.size(); ++i) {
    for (const auto& name : *answers[firstProbe + i]) {
      if (auto it = out.find(name); it != out.end()) it->second.push_back(probed[i]);
    }
  }
  for (auto& [name, present] : out) std::sort(present.begin(), present.end());
  return out;
}

}  // namespace

Result<MetricLabelNames> discoverLabelPresence(Client& client, std::string_view seriesQuery,
                                               const std::vector<std::string>& labels,
                                               const TimeRange& window, DiscoveryReport* report) {
  size_t calls = 0;
  auto out = presence(client, seriesQuery, nullptr, labels, window, calls);
  if (report) *report = {false, calls};
  return out;
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
  r.calls += 2;
  auto names = client.labelValues("__name__", {std::string(seriesQuery)}, window);
  if (!names) return useFallback(names.status()) ? fallback() : names.status();
  auto all = client.labelNames({std::string(seriesQuery)}, window);
  if (!all) return useFallback(all.status()) ? fallback() : all.status();
  std::vector<std::string> candidates;
  size_t probes = 0;
  for (auto& label : *all) {
    if (label == "__name__") continue;
    if (!requiresLabel(seriesQuery, label)) ++probes;
    candidates.push_back(std::move(label));
  }
  Result<MetricLabelNames> labels = Status::unavailable("not asked");
  if (probes < names->size()) {
    labels = presence(client, seriesQuery, &*names, candidates, window, r.calls);
  } else {
    r.calls += names->size();
    labels = labelNamesPerMetric(client, seriesQuery, *names, window, options.concurrency);
  }
  if (!labels && useFallback(labels.status())) return fallback();
  return labels;
}

}  // namespace gpuscale::prom
