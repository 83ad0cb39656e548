#include "exporter_command.h"

#include <chrono>
#include <ostream>
#include <string>

#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/sim/triton_model.h"
#include "port_file.h"

namespace gpuscale::sim {
namespace {

struct ExporterArgs {
  std::string listen = "127.0.0.1:0";
  std::string portFile;
};

core::FlagSet exporterFlagSet(ExporterArgs& a) {
  core::FlagSet flags("gpuscale-sim exporter", "gpuscale-sim exporter [flags]",
                      "Serves the Triton model's series on plain HTTP at /metrics for a "
                      "Prometheus to scrape.");
  flags.addString("listen", &a.listen, "HOST:PORT to listen on (port 0: a free one)");
  flags.addString("port-file", &a.portFile, "where the bound port is written once it listens");
  return flags;
}

}  // namespace

std::string exporterFlagReference() {
  ExporterArgs a;
  return exporterFlagSet(a).markdown();
}

int runExporterCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ExporterArgs a;
  core::FlagSet flags = exporterFlagSet(a);
  if (auto exitCode = flags.parseCommand(args, out, err)) return *exitCode;
  auto listen = core::parseHostPort(a.listen);
  if (!listen) {
    err << "--listen wants HOST:PORT\n";
    return 2;
  }
  const core::StopSignals stopSignals;  // before the listener's thread starts

  const TritonModel model(demoTritonModel());
  const auto start = std::chrono::steady_clock::now();
  apiserver::PlainListenerOptions serving;
  serving.name = "http";
  auto server = apiserver::PlainHttpListener::start(
      listen->first, listen->second,
      [&model, start](std::string_view path) {
        core::PlainHttpReply reply;
        if (path == "/metrics") {
          const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
          reply.contentType = "text/plain; version=0.0.4; charset=utf-8";
          reply.body = model.render(elapsed.count());
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

}  // namespace gpuscale::sim
