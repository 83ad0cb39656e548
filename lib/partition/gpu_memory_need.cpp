#include "gpuscale/partition/gpu_memory_need.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "quantity.h"

namespace gpuscale::partition {
namespace {

constexpr std::string_view kFlag = "--gpu-memory-utilization";
constexpr std::string_view kFlagUnderscore = "--gpu_memory_utilization";
// Rounding slack when a fraction divides 1 exactly (0.25 x 4).
constexpr double kSlack = 1e-9;

GpuMemoryNeed unknown(std::string why) {
  return {GpuMemoryNeed::Kind::kUnknown, 0, std::move(why)};
}

// A fraction in (0, 1] spelled exactly (the whole text a number), else nullopt.
std::optional<double> parseFraction(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v <= 0 || v > 1) {
    return std::nullopt;
  }
  return v;
}

// The words of a command line: each element split at whitespace (a shell string is one element),
// quotes around a word dropped.
std::vector<std::string> words(const ContainerCommandLine& c) {
  std::vector<std::string> out;
  auto split = [&](const std::string& s) {
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      std::size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j > i) {
        std::string w = s.substr(i, j - i);
        if (w.size() >= 2 && (w.front() == '\'' || w.front() == '"') && w.back() == w.front()) {
          w = w.substr(1, w.size() - 2);
        }
        out.push_back(std::move(w));
      }
      i = j;
    }
  };
  for (const auto& s : c.command) split(s);
  for (const auto& s : c.args) split(s);
  return out;
}

bool namesVllm(std::string_view word) {
  const std::size_t slash = word.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? word : word.substr(slash + 1);
  return base == "vllm" || base.starts_with("vllm.");
}

bool isVllm(const ContainerCommandLine& c, const std::vector<std::string>& ws) {
  // The image's repository name (vllm/vllm-openai:v0.11.0, .../vllm:tag).
  std::string_view repo = c.image;
  if (auto at = repo.find('@'); at != std::string_view::npos) repo = repo.substr(0, at);
  if (auto slash = repo.rfind('/'); slash != std::string_view::npos) repo = repo.substr(slash + 1);
  if (auto colon = repo.find(':'); colon != std::string_view::npos) repo = repo.substr(0, colon);
  if (repo.starts_with("vllm")) return true;
  return std::any_of(ws.begin(), ws.end(), [](const std::string& w) { return namesVllm(w); });
}

// A vLLM container's need from its words.
GpuMemoryNeed vllmNeed(const ContainerCommandLine& c, const std::vector<std::string>& ws) {
  const std::string who = fmt::format("container \"{}\"", c.name);
  bool config = false;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    std::string_view w = ws[i];
    if (w == "--config" || w.starts_with("--config=")) config = true;
    std::optional<std::string_view> value;
    for (std::string_view flag : {kFlag, kFlagUnderscore}) {
      if (w == flag) {
        value = i + 1 < ws.size() ? std::string_view(ws[i + 1]) : std::string_view();
      } else if (w.starts_with(flag) && w.size() > flag.size() && w[flag.size()] == '=') {
        value = w.substr(flag.size() + 1);
      }
    }
    if (!value) continue;
    auto f = parseFraction(*value);
    if (!f) {
      return unknown(fmt::format(
          "vLLM's --gpu-memory-utilization \"{}\" ({}) is not a number in (0, 1]; set the "
          "{} annotation",
          *value, who, kGpuMemoryFractionAnnotation));
    }
    return {GpuMemoryNeed::Kind::kFraction, *f,
            fmt::format("vLLM preallocates {:g} of each device (--gpu-memory-utilization, {})", *f,
                        who)};
  }
  if (config) {
    return unknown(fmt::format(
        "vLLM ({}) reads --config, which may set --gpu-memory-utilization; set the flag in the "
        "arguments or the {} annotation",
        who, kGpuMemoryFractionAnnotation));
  }
  return {GpuMemoryNeed::Kind::kFraction, kVllmDefaultGpuMemoryUtilization,
          fmt::format("vLLM preallocates {:g} of each device (its default "
                      "--gpu-memory-utilization, {})",
                      kVllmDefaultGpuMemoryUtilization, who)};
}

// The annotations' need, when they say one.
std::optional<GpuMemoryNeed> annotatedNeed(const std::map<std::string, std::string>& annotations) {
  if (auto it = annotations.find(std::string(kGpuMemoryFractionAnnotation));
      it != annotations.end()) {
    auto f = parseFraction(it->second);
    if (!f) {
      return unknown(fmt::format("annotation {}: \"{}\" is not a number in (0, 1]",
                                 kGpuMemoryFractionAnnotation, it->second));
    }
    return GpuMemoryNeed{
        GpuMemoryNeed::Kind::kFraction, *f,
        fmt::format("{:g} of each device (annotation {})", *f, kGpuMemoryFractionAnnotation)};
  }
  if (auto it = annotations.find(std::string(kGpuMemoryAnnotation)); it != annotations.end()) {
    auto bytes = parseQuantity(it->second);
    if (!bytes || *bytes <= 0) {
      return unknown(fmt::format("annotation {}: \"{}\" is not a positive quantity such as 18Gi",
                                 kGpuMemoryAnnotation, it->second));
    }
    return GpuMemoryNeed{
        GpuMemoryNeed::Kind::kBytes, *bytes,
        fmt::format("{} of each device (annotation {})", it->second, kGpuMemoryAnnotation)};
  }
  return std::nullopt;
}

}  // namespace

GpuMemoryNeed gpuMemoryNeed(const std::vector<ContainerCommandLine>& containers,
                            const std::map<std::string, std::string>& annotations) {
  if (auto need = annotatedNeed(annotations)) return *need;
  GpuMemoryNeed worst;
  for (const ContainerCommandLine& c : containers) {
    if (!c.usesGpu) continue;
    const std::vector<std::string> ws = words(c);
    if (!isVllm(c, ws)) continue;
    GpuMemoryNeed need = vllmNeed(c, ws);
    if (need.kind == GpuMemoryNeed::Kind::kUnknown) return need;
    if (worst.kind == GpuMemoryNeed::Kind::kNone || need.value > worst.value) worst = need;
  }
  return worst;
}

int replicasForMemory(const GpuMemoryNeed& need, std::optional<double> deviceBytes) {
  switch (need.kind) {
    case GpuMemoryNeed::Kind::kNone:
      return kNoMemoryBound;
    case GpuMemoryNeed::Kind::kFraction:
      return static_cast<int>(std::floor(1.0 / need.value + kSlack));
    case GpuMemoryNeed::Kind::kBytes: {
      if (!deviceBytes) return 0;
      const double n = std::floor(*deviceBytes / need.value + kSlack);
      return n >= kNoMemoryBound ? kNoMemoryBound : static_cast<int>(n);
    }
    case GpuMemoryNeed::Kind::kUnknown:
      return 0;
  }
  return 0;
}

std::string describeMemoryBound(const GpuMemoryNeed& need, int replicas) {
  if (need.kind == GpuMemoryNeed::Kind::kUnknown) {
    return "the GPU memory a pod takes is unknown: " + need.source;
  }
  if (need.kind == GpuMemoryNeed::Kind::kBytes && replicas == 0) {
    return "the device's memory is unknown, and a pod takes " + need.source;
  }
  return fmt::format("{}: {} pod{} per device", need.source, replicas, replicas == 1 ? "" : "s");
}

}  // namespace gpuscale::partition
