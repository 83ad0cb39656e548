#include "exporter_command.h"

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/sim/triton_model.h"
#include "gpuscale/sim/vllm_model.h"
#include "port_file.h"

namespace gpuscale::sim {
namespace {

enum class ServerKind { kTriton, kVllm };

struct ExporterArgs {
  std::string listen = "127.0.0.1:0";
  std::string portFile;
  ServerKind server = ServerKind::kTriton;
};

core::FlagSet exporterFlagSet(ExporterArgs& a) {
  core::FlagSet flags("gpuscale-sim exporter", "gpuscale-sim exporter [flags]",
                      "Serves the series of demo Triton or vLLM pods on plain HTTP at /metrics for "
                      "a Prometheus to scrape.");
  addListenFlags(flags, &a.listen, &a.portFile);
  flags.addChoice("server", &a.server, "whose series: triton or vllm",
                  {{"triton", ServerKind::kTriton}, {"vllm", ServerKind::kVllm}});
  return flags;
}

int runExporter(ExporterArgs& a, const core::FlagSet& /*flags*/, std::ostream& out,
                std::ostream& err) {
  auto listen = core::parseHostPort(a.listen);
  if (!listen) {
    err << "--listen wants HOST:PORT\n";
    return 2;
  }
  const core::StopSignals stopSignals;  // before the listener's thread starts

  // The demo pods of the chosen server.
  std::function<std::string(double)> render;
  if (a.server == ServerKind::kVllm) {
    render = [model = VllmModel(demoVllmModel())](double t) { return model.render(t); };
  } else {
    render = [model = TritonModel(demoTritonModel())](double t) { return model.render(t); };
  }
  const auto start = std::chrono::steady_clock::now();
  apiserver::PlainListenerOptions serving;
  serving.name = "http";
  auto server = apiserver::PlainHttpListener::start(
      listen->first, listen->second,
      [&render, start](std::string_view path) {
        core::PlainHttpReply reply;
        if (path == "/metrics") {
          const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
          reply.contentType = "text/plain; version=0.0.4; charset=utf-8";
          reply.body = render(elapsed.count());
        } else {
          reply.status = 404;
          reply.body = "404 page not found\n";
        }
        return reply;
      },
      serving);
  if (!server) {
    err << server.status().message() << "\n";
    return server.status().httpCode() == 422 ? 2 : 1;
  }
  writePortFile(a.portFile, (*server)->port());
  out << "listening on " << listen->first << ":" << (*server)->port() << std::endl;
  stopSignals.wait();
  (*server)->stop();
  return 0;
}

}  // namespace

core::CommandHandler exporterCommand() { return core::flagCommand(exporterFlagSet, runExporter); }

}  // namespace gpuscale::sim
