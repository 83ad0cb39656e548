#include "gpuscale/kube/discovery.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <map>

#include "gpuscale/k8s/object_accessors.h"

namespace gpuscale::kube {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool sameTable(const std::vector<k8s::ResourceInfo>& a, const std::vector<k8s::ResourceInfo>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.groupResource == y.groupResource && x.version == y.version &&
           x.singular == y.singular && x.kind == y.kind && x.namespaced == y.namespaced;
  });
}

bool isMetricsGroup(std::string_view group) {
  return group == "custom.metrics.k8s.io" || group == "external.metrics.k8s.io";
}

}  // namespace

std::vector<k8s::ResourceInfo> parseResourceList(const Object& list, const std::string& group,
                                                 const std::string& version) {
  std::vector<k8s::ResourceInfo> out;
  if (!list.is_object() || !list.contains("resources") || !list["resources"].is_array()) return out;
  for (const auto& resource : list["resources"]) {
    if (!resource.is_object()) continue;
    const std::string name = k8s::stringField(resource, "name");
    if (name.empty() || name.find('/') != std::string::npos) continue;
    k8s::ResourceInfo info;
    info.groupResource = {group, name};
    info.version = version;
    info.kind = k8s::stringField(resource, "kind");
    info.singular = k8s::stringField(resource, "singularName");
    if (info.singular.empty()) info.singular = lower(info.kind);
    info.namespaced = k8s::boolField(resource, "namespaced", false);
    out.push_back(std::move(info));
  }
  return out;
}

DiscoveryResourceMapper::DiscoveryResourceMapper(std::shared_ptr<KubeClient> client,
                                                 std::vector<k8s::ResourceInfo> initial)
    : client_(std::move(client)), table_(std::make_shared<const Table>(std::move(initial))) {}

DiscoveryResourceMapper::~DiscoveryResourceMapper() {
  refresher_.request_stop();
  if (refresher_.joinable()) refresher_.join();
}

std::shared_ptr<const DiscoveryResourceMapper::Table> DiscoveryResourceMapper::current() const {
  std::lock_guard lock(mu_);
  return table_;
}

core::Status DiscoveryResourceMapper::refresh() {
  auto core = client_->getPath("/api/v1");
  if (!core) return core.status().withContext("discovery of /api/v1");
  auto groups = client_->getPath("/apis");
  if (!groups) return groups.status().withContext("discovery of /apis");

  const auto previous = current();
  Table table = parseResourceList(*core, "", "v1");
  if (groups->contains("groups") && (*groups)["groups"].is_array()) {
    for (const auto& group : (*groups)["groups"]) {
      const std::string name = k8s::stringField(group, "name");
      const std::string version =
          k8s::stringField(k8s::objectField(group, "preferredVersion"), "version");
      if (name.empty() || version.empty() || isMetricsGroup(name)) continue;
      auto resources = client_->getPath(fmt::format("/apis/{}/{}", name, version));
      if (!resources) {
        spdlog::warn("discovery: skipping {}/{}: {}", name, version, resources.status().toString());
        for (const auto& info : *previous) {
          if (info.groupResource.group == name) table.push_back(info);
        }
        continue;
      }
      auto parsed = parseResourceList(*resources, name, version);
      table.insert(table.end(), parsed.begin(), parsed.end());
    }
  }
  if (sameTable(table, *previous)) return {};
  std::lock_guard lock(mu_);
  retired_.push_back(std::move(table_));
  table_ = std::make_shared<const Table>(std::move(table));
  ++generation_;
  return {};
}

uint64_t DiscoveryResourceMapper::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

void DiscoveryResourceMapper::startRefreshing(std::chrono::seconds interval) {
  refresher_ = std::jthread([this, interval](std::stop_token stop) {
    std::mutex waitMu;
    std::condition_variable_any cv;
    std::unique_lock lock(waitMu);
    while (!cv.wait_for(lock, stop, interval, [] { return false; }) && !stop.stop_requested()) {
      if (auto status = refresh(); !status.ok()) {
        spdlog::warn("discovery refresh failed, keeping the last table: {}", status.toString());
      }
    }
  });
}

const std::vector<k8s::ResourceInfo>& DiscoveryResourceMapper::resources() const {
  std::lock_guard lock(mu_);
  return *table_;
}

core::Result<k8s::ResourceInfo> DiscoveryResourceMapper::resourceFor(
    const k8s::GroupResource& gr) const {
  const auto table = current();
  const std::string group = lower(gr.group);
  const std::string resource = lower(gr.resource);
  for (const auto& info : *table) {
    if (!group.empty() && info.groupResource.group != group) continue;
    if (info.groupResource.resource == resource || info.singular == resource ||
        lower(info.kind) == resource) {
      return info;
    }
  }
  return core::Status::notFound(
      fmt::format("the server doesn't have a resource type \"{}\"", gr.toString()));
}

}  // namespace gpuscale::kube
