#include "run_command.h"

#include <cstdlib>
#include <fstream>
#include <ostream>

#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/kube/config.h"
#include "gpuscale/kube/rest_client.h"
#include "gpuscale/sim/dcgm_exposition.h"
#include "gpuscale/sim/dcgm_pod_delay.h"
#include "gpuscale/sim/gpu_operator_emulator.h"
#include "gpuscale/sim/inference_load_driver.h"
#include "gpuscale/sim/pod_group_controller.h"
#include "gpuscale/sim/scenario.h"
#include "port_file.h"

namespace gpuscale::sim {
namespace {

std::string envOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

struct RunArgs {
  std::string scenario;
  std::string kubeconfig;
  std::string listen = "127.0.0.1:0";
  std::string portFile;
  std::string kwokAnnotation;
  double resyncSeconds = 0;
  std::string logLevel = "info";
  std::string podGroups;
  LoadDriverOptions load;
};

core::FlagSet runFlagSet(RunArgs& a) {
  core::FlagSet flags("gpuscale-sim run", "gpuscale-sim run --scenario FILE [flags]",
                      "Emulates the GPU Operator (and the scenario's inference load) on the "
                      "cluster the kubeconfig names; serves /metrics and /healthz on plain HTTP.");
  flags.addString("scenario", &a.scenario, "the scenario file (required)");
  flags.addString("kubeconfig", &a.kubeconfig, "kubeconfig").defaultText("$KUBECONFIG");
  addListenFlags(flags, &a.listen, &a.portFile);
  flags
      .addString("kwok-annotation", &a.kwokAnnotation,
                 "KEY=VALUE of the annotation that hands a node to KWOK")
      .defaultText("$GPUSCALE_KWOK_NODE_ANNOTATION[_VALUE], else kwok.x-k8s.io/node=fake");
  flags.addFloat("resync", &a.resyncSeconds, "seconds between full resyncs")
      .defaultText("the emulator's");
  flags.addString("log-level", &a.logLevel, "trace, debug, info, warn or error");
  flags.addString("pod-groups", &a.podGroups,
                  "GROUP/VERSION/RESOURCE of a custom resource of LeaderWorkerSet's shape whose "
                  "groups of pods gpuscale-sim keeps (tests without LeaderWorkerSet's controller)");
  flags.addFloat("speed", &a.load.speed, "how much faster than real time the load runs (> 0)");
  flags.addInt("seed", &a.load.seed, "seed of the load's randomness");
  return flags;
}

int runRun(RunArgs& a, const core::FlagSet& flags, std::ostream& out, std::ostream& err) {
  if (a.scenario.empty()) {
    err << "run: --scenario is required\n";
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(a.logLevel));
  auto scenario = loadScenarioFile(a.scenario);
  if (!scenario) {
    err << scenario.status().message() << "\n";
    return 2;
  }
  auto listen = core::parseHostPort(a.listen);
  if (!listen) {
    err << "run: --listen wants HOST:PORT\n";
    return 2;
  }
  EmulatorOptions options;
  options.kwokAnnotationKey = envOr("GPUSCALE_KWOK_NODE_ANNOTATION", options.kwokAnnotationKey);
  options.kwokAnnotationValue =
      envOr("GPUSCALE_KWOK_NODE_ANNOTATION_VALUE", options.kwokAnnotationValue);
  if (flags.changed("kwok-annotation")) {
    const std::string& kv = a.kwokAnnotation;
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      err << "run: --kwok-annotation wants KEY=VALUE\n";
      return 2;
    }
    options.kwokAnnotationKey = kv.substr(0, eq);
    options.kwokAnnotationValue = kv.substr(eq + 1);
  }
  if (flags.changed("resync")) {
    options.resyncPeriod = std::chrono::milliseconds(static_cast<int64_t>(a.resyncSeconds * 1000));
  }
  LoadDriverOptions& loadOptions = a.load;
  if (!(loadOptions.speed > 0)) {
    err << "run: --speed wants a number > 0\n";
    return 2;
  }
  const std::vector<ServiceSpec> services = scenario->loadServices();
  loadOptions.server = scenario->workloadServer;

  const core::StopSignals stopSignals;  // before any thread starts

  auto config =
      kube::loadClientConfig(a.kubeconfig.empty() ? envOr("KUBECONFIG", "") : a.kubeconfig);
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
        if (target == "/healthz" || target == "/readyz") {
          core::PlainHttpReply reply;
          reply.status = sim->healthy() ? 200 : 503;
          reply.body = sim->healthy() ? "ok\n" : "not ready\n";
          return reply;
        }
        if (target != "/metrics") return core::notFoundReply();
        std::string body = prometheus::TextSerializer().Serialize(registry->Collect());
        if (loadDriver != nullptr) body += loadDriver->render();
        body += renderDcgmSeries(dcgmDelay->apply(sim->nodeGpus(), DcgmPodDelay::Clock::now()),
                                 loadDriver != nullptr ? loadDriver->deviceBusyFraction()
                                                       : std::map<std::string, double>{});
        return core::metricsReply(std::move(body));
      },
      serving);
  if (!server) {
    err << "run: " << server.status().message() << "\n";
    return 1;
  }
  out << "listening on " << listen->first << ":" << (*server)->port() << std::endl;
  writePortFile(a.portFile, (*server)->port());

  if (auto s = sim->start(); !s.ok()) {
    err << "run: " << s.toString() << "\n";
    return 1;
  }
  std::unique_ptr<PodGroupController> podGroups;
  if (!a.podGroups.empty()) {
    const auto first = a.podGroups.find('/');
    const auto last = a.podGroups.rfind('/');
    if (first == std::string::npos || first == last) {
      err << "run: --pod-groups wants GROUP/VERSION/RESOURCE\n";
      return 2;
    }
    podGroups = std::make_unique<PodGroupController>(
        *client, kube::ResourceRef::collection(a.podGroups.substr(0, first),
                                               a.podGroups.substr(first + 1, last - first - 1),
                                               a.podGroups.substr(last + 1)));
    podGroups->start();
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
  if (podGroups) podGroups->stop();
  sim->stop();
  (*server)->stop();
  return 0;
}

}  // namespace

core::CommandHandler runCommand() { return core::flagCommand(runFlagSet, runRun); }

}  // namespace gpuscale::sim
