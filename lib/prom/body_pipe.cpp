#include "body_pipe.h"

#include <utility>

namespace gpuscale::prom {

BodyPipe::BodyPipe() : streambuf_state_manager<uint8_t>(std::ios_base::out) {}

pplx::task<BodyPipe::int_type> BodyPipe::_putc(uint8_t ch) {
  return _putn(&ch, 1, true).then([ch](size_t) { return static_cast<int_type>(ch); });
}

pplx::task<size_t> BodyPipe::_putn(const uint8_t* ptr, size_t count, bool copy) {
  Piece piece;
  if (copy) {
    piece.copy.assign(reinterpret_cast<const char*>(ptr), count);
    piece.data = piece.copy;
  } else {
    piece.data = std::string_view(reinterpret_cast<const char*>(ptr), count);
  }
  return hand(std::move(piece));
}

pplx::task<size_t> BodyPipe::_putn(const uint8_t* ptr, size_t count) {
  return _putn(ptr, count, false);
}

pplx::task<size_t> BodyPipe::hand(Piece piece) {
  size_t count = piece.data.size();
  if (count == 0) return pplx::task_from_result<size_t>(0);
  std::lock_guard lock(mutex_);
  // Nobody will read it: let the writer go on (the connection is being cancelled anyway).
  if (aborted_) return pplx::task_from_result(count);
  auto written = piece.written;
  pending_.push_back(std::move(piece));
  if (!pending_.back().copy.empty()) pending_.back().data = pending_.back().copy;
  changed_.notify_all();
  return pplx::create_task(written);
}

std::string_view BodyPipe::next() {
  std::unique_lock lock(mutex_);
  if (taken_) {
    auto written = taken_->written;
    size_t count = taken_->data.size();
    taken_.reset();
    written.set(count);
  }
  changed_.wait(lock, [&] { return !pending_.empty() || finished_ || aborted_; });
  if (aborted_ || pending_.empty()) return {};
  taken_ = std::move(pending_.front());
  pending_.pop_front();
  if (!taken_->copy.empty()) taken_->data = taken_->copy;
  return taken_->data;
}

std::exception_ptr BodyPipe::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void BodyPipe::finish(std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  finished_ = true;
  failure_ = error;
  changed_.notify_all();
}

void BodyPipe::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  if (taken_) taken_->written.set(taken_->data.size());
  taken_.reset();
  for (auto& piece : pending_) piece.written.set(piece.data.size());
  pending_.clear();
  changed_.notify_all();
}

}  // namespace gpuscale::prom
