#include "gpuscale/reconciler/policy_source.h"

#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "gpuscale/core/files.h"

namespace gpuscale::reconciler {

core::Result<std::shared_ptr<PolicySource>> PolicySource::open(std::filesystem::path path) {
  std::shared_ptr<PolicySource> source(new PolicySource(std::move(path)));
  if (source->path_.empty()) {
    // Nothing is managed unless the operator configured it (no built-in cluster-wide policy).
    source->policies_ = std::make_shared<const partition::PolicySet>();
    return source;
  }
  if (auto s = source->load(); !s.ok()) return s;
  return source;
}

core::Status PolicySource::load() {
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(path_, ec);
  auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
  if (ec) return core::Status::invalid(path_.string() + ": cannot read the policy file");
  // Recorded before reading: a file that cannot be opened is reported once, until it changes.
  mtime_ = mtime;
  size_ = size;
  auto text = core::readFile(path_);
  if (!text) return core::Status::invalid(path_.string() + ": cannot read the policy file");
  auto parsed = partition::parsePolicies(*text);
  if (!parsed) return core::Status::invalid(path_.string() + ": " + parsed.status().message());
  for (const std::string& warning : parsed->warnings) {
    spdlog::warn("policy file {}: {}", path_.string(), warning);
  }
  std::lock_guard lock(mu_);
  policies_ = std::make_shared<const partition::PolicySet>(std::move(*parsed));
  return {};
}

std::shared_ptr<const partition::PolicySet> PolicySource::current() const {
  std::lock_guard lock(mu_);
  return policies_;
}

bool PolicySource::reloadIfChanged() {
  if (path_.empty()) return false;
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(path_, ec);
  auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
  if (ec) {
    if (unreadable_) return false;
  } else if (!unreadable_ && mtime == mtime_ && size == size_) {
    return false;
  }
  auto s = load();
  unreadable_ = static_cast<bool>(ec);
  reloads_.fetch_add(1);
  lastOk_.store(s.ok());
  if (!s.ok()) {
    spdlog::error("policy reload rejected, keeping the previous policies: {}", s.message());
    return false;
  }
  spdlog::info("policies reloaded from {}", path_.string());
  return true;
}

}  // namespace gpuscale::reconciler
