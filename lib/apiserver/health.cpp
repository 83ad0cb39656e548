#include "gpuscale/apiserver/health.h"

#include <set>

namespace gpuscale::apiserver {
namespace {

constexpr std::string_view kEndpoints[] = {"healthz", "livez", "readyz"};

// The endpoint name and optional check name of a health path; empty endpoint when it is none.
std::pair<std::string_view, std::string_view> splitHealthPath(std::string_view path) {
  if (path.empty() || path.front() != '/') return {};
  path.remove_prefix(1);
  const size_t slash = path.find('/');
  const std::string_view endpoint = path.substr(0, slash);
  for (const auto known : kEndpoints) {
    if (endpoint != known) continue;
    if (slash == std::string_view::npos) return {endpoint, {}};
    const std::string_view check = path.substr(slash + 1);
    if (check.empty() || check.find('/') != std::string_view::npos) return {};
    return {endpoint, check};
  }
  return {};
}

unsigned endpointBit(std::string_view endpoint) {
  if (endpoint == "healthz") return HealthChecks::kHealthz;
  if (endpoint == "livez") return HealthChecks::kLivez;
  return HealthChecks::kReadyz;
}

HttpResponse okText(std::string body) {
  HttpResponse response;
  response.contentType = "text/plain; charset=utf-8";
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.body = std::move(body);
  return response;
}

}  // namespace

HttpResponse plainTextResponse(int status, std::string body) {
  HttpResponse response = okText(std::move(body) + "\n");
  response.status = status;
  return response;
}

HealthChecks::HealthChecks() {
  add(
      "ping", [] { return core::Status(); }, kAll);
  add(
      "shutdown",
      [this] {
        return shuttingDown_.load() ? core::Status::unavailable("process is shutting down")
                                    : core::Status();
      },
      kReadyz);
}

void HealthChecks::add(std::string name, Check check, unsigned endpoints) {
  entries_.push_back({std::move(name), std::move(check), endpoints});
}

bool HealthChecks::isHealthPath(std::string_view path) {
  return !splitHealthPath(path).first.empty();
}

HttpResponse HealthChecks::evaluate(std::string_view path, const QueryParams& query) const {
  const auto [endpoint, single] = splitHealthPath(path);
  const unsigned bit = endpointBit(endpoint);
  if (!single.empty()) {
    for (const auto& entry : entries_) {
      if ((entry.endpoints & bit) == 0 || entry.name != single) continue;
      const core::Status status = entry.check();
      if (!status.ok()) return plainTextResponse(500, "internal server error: " + status.message());
      return okText("ok");
    }
    return plainTextResponse(404, "404 page not found");
  }

  std::set<std::string, std::less<>> excluded;
  for (const auto& [key, value] : query.pairs()) {
    if (key == "exclude") excluded.insert(value);
  }
  std::string lines;
  bool failed = false;
  for (const auto& entry : entries_) {
    if ((entry.endpoints & bit) == 0) continue;
    if (auto it = excluded.find(entry.name); it != excluded.end()) {
      excluded.erase(it);
      lines += "[+]" + entry.name + " excluded: ok\n";
      continue;
    }
    if (entry.check().ok()) {
      lines += "[+]" + entry.name + " ok\n";
    } else {
      lines += "[-]" + entry.name + " failed: reason withheld\n";
      failed = true;
    }
  }
  if (!excluded.empty()) {
    lines += "warn: some health checks cannot be excluded: no matches for ";
    bool first = true;
    for (const auto& name : excluded) {
      lines += (first ? "\"" : ",\"") + name + "\"";
      first = false;
    }
    lines += "\n";
  }
  if (failed) return plainTextResponse(500, lines + std::string(endpoint) + " check failed");
  if (!query.has("verbose")) return okText("ok");
  return okText(lines + std::string(endpoint) + " check passed\n");
}

}  // namespace gpuscale::apiserver
