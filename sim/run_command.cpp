#include "run_command.h"

#include <cstdlib>
#include <fstream>
#include <ostream>

#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include "command_flags.h"
#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/kube/config.h"
#include "gpuscale/kube/rest_client.h"
#include "gpuscale/sim/dcgm_exposition.h"
#include "gpuscale/sim/dcgm_pod_delay.h"
#include "gpuscale/sim/gpu_operator_emulator.h"
#include "gpuscale/sim/inference_load_driver.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {
namespace {

constexpr std::string_view kFlags[] = {"--scenario",  "--kubeconfig",      "--listen",
                                       "--port-file", "--kwok-annotation", "--resync",
                                       "--log-level", "--speed",           "--seed"};

std::string envOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

}  // namespace

int runRunCommand(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  auto flags = CommandFlags::parse(args, kFlags, err);
  if (!flags) return 2;
  if (!flags->has("--scenario")) {
    err << "run: --scenario is required\n";
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(flags->get("--log-level", "info")));
  auto scenario = loadScenarioFile(flags->get("--scenario"));
  if (!scenario) {
    err << scenario.status().message() << "\n";
    return 2;
  }
  auto listen = core::parseHostPort(flags->get("--listen", "127.0.0.1:0"));
  if (!listen) {
    err << "run: --listen wants HOST:PORT\n";
    return 2;
  }
  EmulatorOptions options;
  options.kwokAnnotationKey = envOr("GPUSCALE_KWOK_NODE_ANNOTATION", options.kwokAnnotationKey);
  options.kwokAnnotationValue =
      envOr("GPUSCALE_KWOK_NODE_ANNOTATION_VALUE", options.kwokAnnotationValue);
  if (flags->has("--kwok-annotation")) {
    const std::string kv = flags->get("--kwok-annotation");
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      err << "run: --kwok-annotation wants KEY=VALUE\n";
      return 2;
    }
    options.kwokAnnotationKey = kv.substr(0, eq);
    options.kwokAnnotationValue = kv.substr(eq + 1);
  }
  if (flags->has("--resync")) {
    try {
      options.resyncPeriod =
          std::chrono::milliseconds(static_cast<int64_t>(std::stod(flags->get("--resync")) * 1000));
    } catch (const std::exception&) {
      err << "run: --resync wants seconds\n";
      return 2;
    }
  }

  LoadDriverOptions loadOptions;
  try {
    loadOptions.speed = std::stod(flags->get("--speed", "1"));
    loadOptions.seed = std::stoull(flags->get("--seed", "1"));
  } catch (const std::exception&) {
    err << "run: --speed wants a number > 0 and --seed an unsigned integer\n";
    return 2;
  }
  if (!(loadOptions.speed > 0)) {
    err << "run: --speed wants a number > 0\n";
    return 2;
  }
  const std::vector<ServiceSpec> services = scenario->loadServices();

  const core::StopSignals stopSignals;  // before any thread starts

  auto config = kube::loadClientConfig(flags->get("--kubeconfig", envOr("KUBECONFIG", "")));
  if (!config) {
    err << "run: " << config.status().message() << "\n";
    return 1;
  }
  config->qps = 50;
  config->burst = 100;
  config->userAgent = "gpuscale-sim";
  auto client = kube::RestKubeClient::create(*config);
  if (!client) {
    err << "run: " << client.status().message() << "\n";
    return 1;
  }
  auto registry = std::make_shared<prometheus::Registry>();
  auto dcgmDelay = std::make_shared<DcgmPodDelay>(scenario->gpuOperator.dcgmPodDelay);
  auto emulator = GpuOperatorEmulator::create(*client, std::move(*scenario), options, registry);
  if (!emulator) {
    err << "run: " << emulator.status().message() << "\n";
    return 2;
  }
  GpuOperatorEmulator* sim = emulator->get();
  std::unique_ptr<InferenceLoadDriver> driver;
  if (!services.empty()) {
    auto created =
        InferenceLoadDriver::create(services, loadOptions, [sim] { return sim->podDevices(); });
    if (!created) {
      err << "run: " << created.status().message() << "\n";
      return 2;
    }
    driver = std::move(*created);
  }
  InferenceLoadDriver* loadDriver = driver.get();
  apiserver::PlainListenerOptions serving;
  serving.name = "http";
  serving.registry = registry;
  auto server = apiserver::PlainHttpListener::start(
      listen->first, listen->second,
      [sim, registry, loadDriver, dcgmDelay](std::string_view target) {
        core::PlainHttpReply reply;
        if (target == "/healthz" || target == "/readyz") {
          reply.status = sim->healthy() ? 200 : 503;
          reply.body = sim->healthy() ? "ok\n" : "not ready\n";
        } else if (target == "/metrics") {
          reply.contentType = "text/plain; version=0.0.4; charset=utf-8";
          reply.body = prometheus::TextSerializer().Serialize(registry->Collect());
          if (loadDriver != nullptr) reply.body += loadDriver->render();
          reply.body +=
              renderDcgmSeries(dcgmDelay->apply(sim->nodeGpus(), DcgmPodDelay::Clock::now()),
                               loadDriver != nullptr ? loadDriver->deviceBusyFraction()
                                                     : std::map<std::string, double>{});
        } else {
          reply.status = 404;
          reply.body = "404 page not found\n";
        }
        return reply;
      },
      serving);
  if (!server) {
    err << "run: " << server.status().message() << "\n";
    return 1;
  }
  out << "listening on " << listen->first << ":" << (*server)->port() << std::endl;
  writePortFile(flags->get("--port-file"), (*server)->port());

  if (auto s = sim->start(); !s.ok()) {
    err << "run: " << s.toString() << "\n";
    return 1;
  }
  if (driver) {
    driver->start();
    for (const ServiceSpec& service : services) {
      spdlog::info("load model{}: {} pods selected by \"{}\" in {}, speed {}, seed {}",
                   service.name.empty() ? "" : " of service " + service.name, service.load.model,
                   service.load.podSelector, service.load.namespaceName, loadOptions.speed,
                   loadOptions.seed);
    }
  }
  spdlog::info("gpuscale-sim running scenario; SIGTERM stops");
  const int received = stopSignals.wait();
  spdlog::info("signal {}: stopping", received);
  if (driver) driver->stop();
  sim->stop();
  (*server)->stop();
  return 0;
}

}  // namespace gpuscale::sim
