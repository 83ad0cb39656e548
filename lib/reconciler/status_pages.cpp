#include "gpuscale/reconciler/status_pages.h"

namespace gpuscale::reconciler {
namespace {

constexpr const char* kText = "text/plain; charset=utf-8";

}  // namespace

core::PlainHttpReply probeReply(std::string_view path, const StatusSource& source) {
  if (path == "/healthz" || path == "/livez") return {200, kText, "ok"};
  if (path == "/readyz") {
    if (!source.synced()) return {500, kText, "informers not synced"};
    return {200, kText, "ok"};
  }
  return {404, kText, "404 page not found"};
}

std::optional<core::PlainHttpReply> statusPage(std::string_view path, const StatusSource& source) {
  if (path == "/plan") return core::PlainHttpReply{200, "application/json", source.lastPlanJson()};
  if (path == "/leader")
    return core::PlainHttpReply{200, kText, source.leader() ? "true" : "false"};
  return std::nullopt;
}

}  // namespace gpuscale::reconciler
