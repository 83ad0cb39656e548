#include "cleanup_command.h"

#include <iostream>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_args.h"
#include "gpuscale/kube/config.h"
#include "gpuscale/kube/rest_client.h"
#include "gpuscale/reconciler/cleanup.h"

namespace gpuscale::reconciler {
namespace {

constexpr int kExitClean = 0;
constexpr int kExitLeftovers = 1;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage: gpuscale-reconciler cleanup [--kubeconfig PATH] [--state-namespace default]\n"
    "    [--state-config-map gpuscale-reconciler-state] [--wait-timeout 10m]\n"
    "    [--restore-stock-configs [--stock-mig-config all-disabled]\n"
    "     [--stock-device-plugin-config NAME]] [--keep-state]\n"
    "\n"
    "  cleanup  the off-ramp, once the reconciler is stopped (scaled to 0 or uninstalled): waits\n"
    "           for MIG changes in flight, restores each HPA's maxReplicas from the state store,\n"
    "           removes the reshape taint and every gpuscale.io/ label and annotation from nodes\n"
    "           and gpuscale.io/status from HPAs, then deletes the state store. With\n"
    "           --restore-stock-configs, nodes labelled with gpuscale's own MIG or device-plugin\n"
    "           configs get the stock ones (--stock-device-plugin-config empty: the label is\n"
    "           removed). Safe to run again. --state-namespace is the reconciler's namespace\n"
    "           (the chart's release namespace).\n";

struct CleanupArgs {
  std::string kubeconfig;
  CleanupOptions options;
};

int usage(std::ostream& err, const std::string& message) {
  err << "gpuscale-reconciler cleanup: " << message << "\n" << kUsage;
  return kExitUsage;
}

}  // namespace

int runCleanupCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CleanupArgs a;
  bool help = false;
  core::FlagCallbacks flags;
  flags.isBoolean = [](std::string_view name) {
    return name == "restore-stock-configs" || name == "keep-state" || name == "help";
  };
  flags.apply = [&](std::string_view name, std::string_view text) -> core::Result<bool> {
    const std::string value(text);
    auto boolean = [&](bool& target) {
      target = value == "true";
      return value == "true" || value == "false";
    };
    bool ok = true;
    if (name == "kubeconfig") {
      a.kubeconfig = value;
    } else if (name == "state-namespace") {
      a.options.state.ns = value;
      ok = !value.empty();
    } else if (name == "state-config-map") {
      a.options.state.name = value;
      ok = !value.empty();
    } else if (name == "wait-timeout") {
      auto d = core::parseGoDuration(value);
      ok = d.ok() && d->count() >= 0;
      if (ok) a.options.waitTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    } else if (name == "restore-stock-configs") {
      ok = boolean(a.options.restoreStockConfigs);
    } else if (name == "stock-mig-config") {
      a.options.stockMigConfig = value;
      ok = !value.empty();
    } else if (name == "stock-device-plugin-config") {
      a.options.stockDevicePluginConfig = value;
    } else if (name == "keep-state") {
      ok = boolean(a.options.keepStateStore);
    } else if (name == "help") {
      help = true;
    } else {
      return false;
    }
    if (!ok)
      return core::Status::badRequest("bad value \"" + value + "\" for --" + std::string(name));
    return true;
  };
  auto rest = core::applyFlags(args, flags);
  if (!rest) return usage(err, rest.status().message());
  if (help) {
    out << kUsage;
    return kExitClean;
  }
  if (!rest->empty()) return usage(err, "unexpected argument " + rest->front());
  auto config = kube::loadClientConfig(a.kubeconfig);
  if (!config) return usage(err, config.status().message());
  config->userAgent = "gpuscale-reconciler/cleanup";
  auto client = kube::RestKubeClient::create(*config);
  if (!client) return usage(err, client.status().message());
  std::shared_ptr<kube::KubeClient> kc = std::move(*client);
  auto report = cleanup(kc, a.options);
  if (!report) {
    err << "gpuscale-reconciler cleanup: " << report.status().message() << "\n";
    return kExitUsage;
  }
  out << cleanupReportText(*report);
  return report->clean() ? kExitClean : kExitLeftovers;
}

}  // namespace gpuscale::reconciler
