#include "support/prometheus_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cpprest/http_client.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/thanos.h"
#include "support/victoriametrics.h"

extern char** environ;

namespace gpuscale::test {
namespace {

using core::Status;

pid_t spawn(const std::vector<std::string>& argv, const std::string& logPath) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

bool probeReady(const std::string& base, const PrometheusServerOptions& options) {
  try {
    web::http::client::http_client_config config;
    if (!options.probeClientCert.empty()) {
      config.set_ssl_context_callback([&options](boost::asio::ssl::context& ctx) {
        ctx.use_certificate_chain_file(options.probeClientCert);
        ctx.use_private_key_file(options.probeClientKey, boost::asio::ssl::context::pem);
      });
    }
    config.set_timeout(std::chrono::seconds(2));
    config.set_validate_certificates(false);
    config.set_proxy(web::web_proxy(web::web_proxy::disabled));
    web::http::client::http_client client(web::uri(base), config);
    web::http::http_request request(web::http::methods::GET);
    request.set_request_uri(web::uri("-/ready"));
    if (!options.probeAuthorization.empty()) {
      request.headers().add("Authorization", options.probeAuthorization);
    }
    return client.request(request).get().status_code() == 200;
  } catch (const std::exception&) {
    return false;
  }
}

std::string scrapeConfig(const PrometheusServerOptions& options) {
  std::ostringstream out;
  out << "global:\n  scrape_interval: " << options.scrapeInterval << "\n";
  // VictoriaMetrics' strict config parser knows no rule evaluation settings.
  if (backendUnderTest() == Backend::kPrometheus) {
    out << "  evaluation_interval: " << options.scrapeInterval << "\n";
  }
  if (backendUnderTest() == Backend::kThanos) out << thanosExternalLabelsYaml();
  out << "scrape_configs:\n  - job_name: exporter\n    static_configs:\n      - targets: [";
  for (size_t i = 0; i < options.scrapeTargets.size(); ++i) {
    out << (i ? ", " : "") << "'" << options.scrapeTargets[i] << "'";
  }
  out << "]\n";
  return out.str();
}

}  // namespace

std::string makeTempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

void removeTree(const std::string& path) {
  std::error_code ignored;
  if (!path.empty()) std::filesystem::remove_all(path, ignored);
}

uint16_t freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

int runProgram(const std::vector<std::string>& argv, const std::string& logPath) {
  pid_t pid = spawn(argv, logPath);
  if (pid < 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Status backfillOpenMetrics(const std::string& openMetricsFile, const std::string& storageDir) {
  if (backendUnderTest() == Backend::kVictoriaMetrics) {
    // No offline block writer: a server on the storage folder imports it, and stopping it
    // persists it.
    PrometheusServerOptions options;
    options.storageDir = storageDir;
    options.readyTimeout = std::chrono::seconds(600);
    auto server = PrometheusServer::start(options);
    if (!server.ok()) return server.status();
    return importOpenMetrics((*server)->url(), openMetricsFile, (*server)->workDir());
  }
  std::string log = storageDir + "/promtool.log";
  int rc = runProgram(
      {promtoolBinary(), "tsdb", "create-blocks-from", "openmetrics", openMetricsFile, storageDir},
      log);
  if (rc != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return Status::internal("promtool exited with " + std::to_string(rc) + ": " + text.str());
  }
  return Status();
}

core::Result<TestCertificates> generateTestCertificates(const std::string& dir) {
  const std::string openssl = "/usr/bin/openssl";
  const std::string log = dir + "/openssl.log";
  TestCertificates out{dir + "/ca.crt", dir + "/server.crt", dir + "/server.key",
                       dir + "/client.crt", dir + "/client.key"};
  auto keyArgs = [](const std::string& key) {
    return std::vector<std::string>{
        "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key};
  };
  std::vector<std::string> ca = {
      openssl, "req", "-x509", "-days", "2", "-subj", "/CN=gpuscale-test-ca", "-out", out.caCert};
  auto caKey = keyArgs(dir + "/ca.key");
  ca.insert(ca.begin() + 2, caKey.begin(), caKey.end());
  if (runProgram(ca, log) != 0) return Status::internal("openssl: cannot make the test CA");
  struct Leaf {
    std::string name, cert, key, extensions;
  } leaves[] = {
      {"server", out.serverCert, out.serverKey,
       "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"},
      {"client", out.clientCert, out.clientKey, "extendedKeyUsage=clientAuth"},
  };
  for (const auto& leaf : leaves) {
    std::string csr = dir + "/" + leaf.name + ".csr";
    std::string ext = dir + "/" + leaf.name + ".ext";
    std::ofstream(ext) << leaf.extensions << "\n";
    std::vector<std::string> request = {openssl, "req", "-subj", "/CN=" + leaf.name, "-out", csr};
    auto key = keyArgs(leaf.key);
    request.insert(request.begin() + 2, key.begin(), key.end());
    std::vector<std::string> sign = {openssl,
                                     "x509",
                                     "-req",
                                     "-in",
                                     csr,
                                     "-CA",
                                     out.caCert,
                                     "-CAkey",
                                     dir + "/ca.key",
                                     "-CAcreateserial",
                                     "-days",
                                     "2",
                                     "-extfile",
                                     ext,
                                     "-out",
                                     leaf.cert};
    if (runProgram(request, log) != 0 || runProgram(sign, log) != 0) {
      return Status::internal("openssl: cannot make the " + leaf.name + " certificate");
    }
  }
  return out;
}

std::string prometheusBinaryDir() {
  const char* dir = std::getenv("GPUSCALE_PROMETHEUS_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/usr/bin";
}
std::string prometheusBinary() { return prometheusBinaryDir() + "/prometheus"; }
std::string promtoolBinary() { return prometheusBinaryDir() + "/promtool"; }

bool PrometheusServer::available() {
  if (backendUnderTest() != Backend::kPrometheus) return true;
  // A backend named explicitly must be there: its absence fails the tests instead of skipping them.
  if (std::getenv("GPUSCALE_PROMETHEUS_DIR") != nullptr) return true;
  return ::access(prometheusBinary().c_str(), X_OK) == 0 &&
         ::access(promtoolBinary().c_str(), X_OK) == 0;
}

PrometheusServer* PrometheusServer::startForSuite(PrometheusServerOptions options,
                                                  std::string& error) {
  auto server = start(std::move(options));
  if (!server.ok()) {
    error = server.status().toString();
    return nullptr;
  }
  return server->release();
}

core::Result<std::unique_ptr<PrometheusServer>> PrometheusServer::start(
    PrometheusServerOptions options) {
  const Backend backend = backendUnderTest();
  if (backend != Backend::kPrometheus &&
      (!options.routePrefix.empty() || !options.webConfig.empty())) {
    return Status::badRequest("the " + std::string(backendName(backend)) +
                              " test server takes no Prometheus web config or route prefix");
  }
  std::unique_ptr<PrometheusServer> server(new PrometheusServer());
  server->workDir_ = makeTempDir("gpuscale-prometheus-");
  if (server->workDir_.empty()) return Status::internal("cannot create a temporary folder");
  server->storageDir_ =
      options.storageDir.empty() ? server->workDir_ + "/data" : options.storageDir;
  server->logPath_ = server->workDir_ + "/prometheus.log";
  server->scheme_ = options.tls ? "https" : "http";
  server->prefix_ = options.routePrefix;
  std::ofstream(server->workDir_ + "/prometheus.yml") << scrapeConfig(options);
  if (!options.webConfig.empty()) {
    std::ofstream(server->workDir_ + "/web.yml") << options.webConfig;
  }
  server->options_ = std::move(options);
  // A port can be taken between probing and binding; a few attempts make that race harmless.
  Status launched;
  for (int attempt = 0; attempt < 5; ++attempt) {
    server->port_ = freeLoopbackPort();
    launched = server->launch();
    if (launched.ok()) return server;
    if (server->pid_ > 0) return launched;  // it runs but is not ready, or Thanos failed
  }
  return launched;
}

Status PrometheusServer::restart() {
  stop();
  return launch();
}

Status PrometheusServer::launch() {
  const PrometheusServerOptions& options = options_;
  std::vector<std::string> argv =
      backendUnderTest() == Backend::kVictoriaMetrics
          ? victoriaMetricsArgs(workDir_ + "/prometheus.yml", storageDir_, port_)
          : std::vector<std::string>{
                prometheusBinary(),
                "--config.file=" + workDir_ + "/prometheus.yml",
                "--storage.tsdb.path=" + storageDir_,
                "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                "--storage.tsdb.retention.time=30d",
                "--log.level=warn",
            };
  if (!options.routePrefix.empty()) {
    argv.push_back("--web.route-prefix=" + options.routePrefix);
    argv.push_back("--web.external-url=" + prometheusUrl());
  }
  if (!options.webConfig.empty()) argv.push_back("--web.config.file=" + workDir_ + "/web.yml");
  argv.insert(argv.end(), options.extraArgs.begin(), options.extraArgs.end());
  pid_ = spawn(argv, logPath_);
  if (pid_ < 0) return Status::internal("cannot start " + argv[0]);
  auto deadline = std::chrono::steady_clock::now() + options.readyTimeout;
  const std::string base = prometheusUrl() + "/";
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::internal("prometheus exited: " + logTail());
    }
    if (!probeReady(base, options)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (backendUnderTest() == Backend::kThanos) {
      // The query keeps its port across restarts, so clients keep their URL.
      auto thanos = ThanosQuery::start(prometheusUrl(), workDir_, queryPort_, options.readyTimeout);
      if (!thanos.ok()) return thanos.status();
      thanos_ = std::move(*thanos);
      queryPort_ = thanos_->port();
    }
    return Status();
  }
  return Status::internal("prometheus not ready in time: " + logTail());
}

PrometheusServer::~PrometheusServer() {
  stop();
  removeTree(workDir_);
}

std::string PrometheusServer::url() const { return thanos_ ? thanos_->url() : prometheusUrl(); }

std::string PrometheusServer::prometheusUrl() const {
  return scheme_ + "://127.0.0.1:" + std::to_string(port_) + prefix_;
}

std::vector<pid_t> PrometheusServer::pids() const {
  std::vector<pid_t> out{pid_};
  if (thanos_) {
    auto more = thanos_->pids();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

uint64_t PrometheusServer::rssBytes() const {
  uint64_t sum = 0;
  for (pid_t pid : pids()) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmRSS:", 0) == 0) sum += std::stoull(line.substr(6)) * 1024;
    }
  }
  return sum;
}

std::string PrometheusServer::logTail() const {
  std::ifstream in(logPath_);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  all = all.size() > 2000 ? all.substr(all.size() - 2000) : all;
  return thanos_ ? all + "\n" + thanos_->logTail() : all;
}

void PrometheusServer::stop() {
  thanos_.reset();
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace gpuscale::test
