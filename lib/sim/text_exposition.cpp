#include "gpuscale/sim/text_exposition.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace gpuscale::sim {
namespace {

// Python's repr of a finite double: the shortest round-trip digits, fixed notation for decimal
// exponents -4..15 (always with a fractional part), else d[.ddd]e[+-]XX.
std::string pythonRepr(double value) {
  char buffer[64];
  auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (ec != std::errc()) return fmt::format("{}", value);
  std::string_view sci(buffer, static_cast<std::size_t>(end - buffer));
  std::string sign;
  if (sci.front() == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  const std::size_t e = sci.find('e');
  std::string digits(sci.substr(0, e));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1) mantissa += "." + digits.substr(1);
    return fmt::format("{}{}e{}{:02d}", sign, mantissa, exponent < 0 ? '-' : '+',
                       std::abs(exponent));
  }
  if (exponent < 0) {
    return sign + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  }
  const auto integerDigits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= integerDigits) {
    return sign + digits + std::string(integerDigits - digits.size(), '0') + ".0";
  }
  return sign + digits.substr(0, integerDigits) + "." + digits.substr(integerDigits);
}

}  // namespace

std::string formatFamilyHeader(std::string_view name, std::string_view type,
                               std::string_view help) {
  return fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::string formatLabelSet(const ExpositionLabels& labels) {
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first + "=\"";
    for (char c : labels[i].second) {
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      if (c == '\\' || c == '"') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string formatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

std::string formatPythonSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  const std::string s = pythonRepr(value);
  const std::size_t dot = s.find('.');
  // prometheus_client switches to an exponent sooner than Python, the way Go does.
  if (value > 0 && dot != std::string::npos && dot > 6) {
    std::string mantissa = s.substr(0, 1) + "." + s.substr(1, dot - 1) + s.substr(dot + 1);
    while (!mantissa.empty() && (mantissa.back() == '0' || mantissa.back() == '.')) {
      mantissa.pop_back();
    }
    return fmt::format("{}e+0{}", mantissa, dot - 1);
  }
  return s;
}

void Histogram::observe(double value, double weight) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  counts_[static_cast<std::size_t>(it - bounds_.begin())] += weight;
  sum_ += value * weight;
  count_ += weight;
}

double Histogram::cumulative(std::size_t i) const {
  double total = 0;
  for (std::size_t b = 0; b <= i && b < counts_.size(); ++b) total += counts_[b];
  return total;
}

std::string formatHistogramSamples(std::string_view name, const ExpositionLabels& labels,
                                   const Histogram& histogram, std::string (*format)(double)) {
  std::string out;
  const auto bounds = histogram.bounds();
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    ExpositionLabels withLe = labels;
    withLe.emplace_back("le", i < bounds.size() ? format(bounds[i]) : "+Inf");
    out += fmt::format("{}_bucket{} {}\n", name, formatLabelSet(withLe),
                       format(histogram.cumulative(i)));
  }
  out += fmt::format("{}_count{} {}\n", name, formatLabelSet(labels), format(histogram.count()));
  out += fmt::format("{}_sum{} {}\n", name, formatLabelSet(labels), format(histogram.sum()));
  return out;
}

}  // namespace gpuscale::sim
