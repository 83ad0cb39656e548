#include "fakes/fake_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace gpuscale::testing {

struct FakeHttpServer::State {
  std::mutex mu;
  std::condition_variable cv;
  bool stopped = false;
  std::vector<int> fds;
  std::vector<std::thread> threads;
};

namespace {

bool writeAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 404:
      return "Not Found";
    case 410:
      return "Gone";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

class SocketExchange final : public FakeHttpServer::Exchange {
 public:
  SocketExchange(int fd, std::shared_ptr<FakeHttpServer::State> state)
      : fd_(fd), state_(std::move(state)) {}

  void respond(int status, const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers) override {
    std::ostringstream out;
    out << "HTTP/1.1 " << status << ' ' << reasonPhrase(status) << "\r\n"
        << "Content-Type: application/json\r\nContent-Length: " << body.size() << "\r\n";
    for (const auto& [name, value] : headers) out << name << ": " << value << "\r\n";
    out << "\r\n" << body;
    alive_ = writeAll(fd_, out.str());
  }
  void beginStream(int status) override {
    alive_ = writeAll(fd_, "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) +
                               "\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n");
  }
  bool chunk(const std::string& data) override {
    std::ostringstream out;
    out << std::hex << data.size() << "\r\n" << data << "\r\n";
    return alive_ = alive_ && writeAll(fd_, out.str());
  }
  void endStream() override { alive_ = alive_ && writeAll(fd_, "0\r\n\r\n"); }
  void hangUp() override {
    ::shutdown(fd_, SHUT_RDWR);
    alive_ = false;
  }
  bool waitFor(std::chrono::milliseconds d) override {
    std::unique_lock lock(state_->mu);
    return !state_->cv.wait_for(lock, d, [this] { return state_->stopped; });
  }
  bool alive() const { return alive_; }

 private:
  int fd_;
  std::shared_ptr<FakeHttpServer::State> state_;
  bool alive_ = true;
};

}  // namespace

std::string FakeRequest::query(const std::string& key) const {
  const auto q = target.find('?');
  if (q == std::string::npos) return "";
  std::istringstream pairs(target.substr(q + 1));
  std::string pair;
  while (std::getline(pairs, pair, '&')) {
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    std::string raw = eq == std::string::npos ? "" : pair.substr(eq + 1);
    std::string value;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '%' && i + 2 < raw.size()) {
        value += static_cast<char>(hex(raw[i + 1]) * 16 + hex(raw[i + 2]));
        i += 2;
      } else {
        value += raw[i] == '+' ? ' ' : raw[i];
      }
    }
    return value;
  }
  return "";
}

FakeHttpServer::FakeHttpServer(Handler handler)
    : handler_(std::move(handler)), state_(std::make_shared<State>()) {
  listenFd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(listenFd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::listen(listenFd_, 64);
  socklen_t length = sizeof address;
  ::getsockname(listenFd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] {
    while (true) {
      const int fd = ::accept(listenFd_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard lock(state_->mu);
      if (state_->stopped) {
        ::close(fd);
        return;
      }
      state_->fds.push_back(fd);
      state_->threads.emplace_back([this, fd] { serve(fd); });
    }
  });
}

FakeHttpServer::~FakeHttpServer() { stop(); }

void FakeHttpServer::stop() {
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopped) return;
    state_->stopped = true;
    for (int fd : state_->fds) ::shutdown(fd, SHUT_RDWR);
  }
  state_->cv.notify_all();
  ::shutdown(listenFd_, SHUT_RDWR);
  ::close(listenFd_);
  acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(state_->mu);
    threads.swap(state_->threads);
  }
  for (auto& thread : threads) thread.join();
  for (int fd : state_->fds) ::close(fd);
}

void FakeHttpServer::serve(int fd) {
  std::string buffer;
  char chunk[4096];
  while (true) {
    size_t headerEnd;
    while ((headerEnd = buffer.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    FakeRequest request;
    std::istringstream head(buffer.substr(0, headerEnd));
    std::string line;
    std::getline(head, line);
    std::istringstream requestLine(line);
    requestLine >> request.method >> request.target;
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      request.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    buffer.erase(0, headerEnd + 4);
    size_t length = 0;
    if (auto it = request.headers.find("content-length"); it != request.headers.end()) {
      length = std::stoul(it->second);
    }
    while (buffer.size() < length) {
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    request.body = buffer.substr(0, length);
    buffer.erase(0, length);
    ++requests_;
    SocketExchange exchange(fd, state_);
    handler_(request, exchange);
    if (!exchange.alive()) return;
  }
}

}  // namespace gpuscale::testing
