// TextExposition: the pieces of the Prometheus text format (0.0.4) every exporter of the simulator
// shares — family headers, label sets, sample values and histograms — so the Triton, vLLM and
// dcgm-exporter expositions (triton_exposition.h, vllm_exposition.h, dcgm_exposition.h) format
// nothing of their own.
//
// Thread safety: pure functions over values; Histogram is a value (not thread-safe to mutate).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscale::sim {

using ExpositionLabels = std::vector<std::pair<std::string, std::string>>;

// A label set `{k="v",...}` with values escaped for the text format (backslash, quote, newline).
std::string formatLabelSet(const ExpositionLabels& labels);

// The "# HELP" and "# TYPE" lines that open a metric family.
std::string formatFamilyHeader(std::string_view name, std::string_view type, std::string_view help);

// One family of plain samples: its header, then `name{labelsOf(item)} valueOf(item)` for each
// item, values formatted by `format`.
template <typename Item, typename LabelsOf, typename ValueOf>
std::string formatFamily(std::string_view name, std::string_view type, std::string_view help,
                         const std::vector<Item>& items, LabelsOf labelsOf, ValueOf valueOf,
                         std::string (*format)(double) = nullptr);

// A family with one series per item and value of `label` (a reason, say): its header, then
// `name{labelsOf(item),label="v"} countsOf(item)[v]` for each item and each of `values` (a missing
// value is 0: the client initialised every series at 0).
template <typename Item, typename LabelsOf, typename CountsOf>
std::string formatFamilyPerValue(std::string_view name, std::string_view type,
                                 std::string_view help, const std::vector<Item>& items,
                                 LabelsOf labelsOf, std::string_view label,
                                 std::span<const std::string_view> values, CountsOf countsOf,
                                 std::string (*format)(double) = nullptr);

// A sample value as the text format spells it (NaN, +Inf, -Inf, shortest round-trip decimal), the
// way Go's client prints it ("3", "0.25").
std::string formatSampleValue(double value);

// A value the way Python's prometheus_client prints samples and bucket bounds (its
// floatToGoString): Python's shortest repr ("3.0", "0.25", "1e-05"), except that a positive value
// with seven or more integer digits is written with an exponent ("1.234567e+06", and, as the client
// does, "1e+010" from ten digits on).
std::string formatPythonSampleValue(double value);

// A cumulative histogram: counts per upper bound (`bounds`, ascending, +Inf implied), a sum and a
// count, as a client library keeps it. `bounds` must outlive the histogram (a static table).
class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds = {})
      : bounds_(bounds), counts_(bounds.size() + 1, 0.0) {}

  // Records `weight` observations of `value` (weight > 0).
  void observe(double value, double weight = 1);

  std::span<const double> bounds() const { return bounds_; }
  // Observations <= bounds()[i] (i == bounds().size(): all of them, the +Inf bucket).
  double cumulative(std::size_t i) const;
  double sum() const { return sum_; }
  double count() const { return count_; }

 private:
  std::span<const double> bounds_;
  std::vector<double> counts_;  // per bucket, not cumulative; the last is above every bound
  double sum_ = 0;
  double count_ = 0;
};

// The samples of one histogram series: `name_bucket{labels,le="..."}` per bound and +Inf, then
// `name_count` and `name_sum` (prometheus_client's order), values and bounds formatted by `format`.
std::string formatHistogramSamples(std::string_view name, const ExpositionLabels& labels,
                                   const Histogram& histogram,
                                   std::string (*format)(double) = formatSampleValue);

template <typename Item, typename LabelsOf, typename ValueOf>
std::string formatFamily(std::string_view name, std::string_view type, std::string_view help,
                         const std::vector<Item>& items, LabelsOf labelsOf, ValueOf valueOf,
                         std::string (*format)(double)) {
  if (format == nullptr) format = formatSampleValue;
  std::string out = formatFamilyHeader(name, type, help);
  for (const Item& item : items) {
    out.append(name).append(formatLabelSet(labelsOf(item))).append(" ");
    out.append(format(valueOf(item))).append("\n");
  }
  return out;
}

template <typename Item, typename LabelsOf, typename CountsOf>
std::string formatFamilyPerValue(std::string_view name, std::string_view type,
                                 std::string_view help, const std::vector<Item>& items,
                                 LabelsOf labelsOf, std::string_view label,
                                 std::span<const std::string_view> values, CountsOf countsOf,
                                 std::string (*format)(double)) {
  struct Series {
    ExpositionLabels labels;
    double value;
  };
  std::vector<Series> series;
  for (const Item& item : items) {
    const auto& counts = countsOf(item);
    for (std::string_view value : values) {
      ExpositionLabels labels = labelsOf(item);
      labels.emplace_back(std::string(label), std::string(value));
      const auto it = counts.find(std::string(value));
      series.push_back({std::move(labels), it == counts.end() ? 0.0 : it->second});
    }
  }
  return formatFamily(
      name, type, help, series, [](const Series& s) { return s.labels; },
      [](const Series& s) { return s.value; }, format);
}

}  // namespace gpuscale::sim
