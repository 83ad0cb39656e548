// BodyPipe: the response stream of a streamed call. cpprestsdk writes the body into it chunk by
// chunk, and each write completes only when the consumer has finished with that chunk, so the
// client reads the socket no faster than the decoder parses: one chunk in memory, however long the
// body and however fast the server sends it (a buffering stream would hold what the network
// delivers ahead of the parser: a Prometheus that sends a 90 MB series answer at once).
//
// Used by one writer (cpprestsdk's I/O, one write in flight at a time) and one consumer thread.
// Reading through the cpprestsdk interface is not supported: the consumer uses next().
//
// Thread safety: next() on one thread; finish(), abort() and the writes from any thread.
#pragma once

#include <cpprest/astreambuf.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscale::prom {

class BodyPipe final : public concurrency::streams::details::streambuf_state_manager<uint8_t> {
 public:
  BodyPipe();

  // Consumer: releases the previous piece (its write completes) and waits for the next one. An
  // empty piece means the end: the body is complete, failed (see failure()) or the pipe was
  // aborted.
  std::string_view next();
  // The error the body ended with, if any (set by finish()).
  std::exception_ptr failure() const;

  // The body is complete (null) or failed: next() returns the end once the pieces are consumed.
  void finish(std::exception_ptr error);
  // Stops the pipe: next() returns the end, pending and later writes complete without waiting.
  void abort();

  // The cpprestsdk interface (write side only).
  bool can_seek() const override { return false; }
  bool has_size() const override { return false; }
  size_t buffer_size(std::ios_base::openmode) const override { return 0; }
  void set_buffer_size(size_t, std::ios_base::openmode) override {}
  size_t in_avail() const override { return 0; }
  pos_type getpos(std::ios_base::openmode) const override { return pos_type(-1); }
  pos_type seekpos(pos_type, std::ios_base::openmode) override { return pos_type(-1); }
  pos_type seekoff(off_type, std::ios_base::seekdir, std::ios_base::openmode) override {
    return pos_type(-1);
  }
  bool acquire(uint8_t*&, size_t&) override { return false; }
  void release(uint8_t*, size_t) override {}

 protected:
  pplx::task<int_type> _putc(uint8_t ch) override;
  pplx::task<size_t> _putn(const uint8_t* ptr, size_t count, bool copy) override;
  pplx::task<size_t> _putn(const uint8_t* ptr, size_t count) override;
  pplx::task<int_type> _bumpc() override { return pplx::task_from_result(traits::eof()); }
  int_type _sbumpc() override { return traits::eof(); }
  pplx::task<int_type> _getc() override { return pplx::task_from_result(traits::eof()); }
  int_type _sgetc() override { return traits::eof(); }
  pplx::task<int_type> _nextc() override { return pplx::task_from_result(traits::eof()); }
  pplx::task<int_type> _ungetc() override { return pplx::task_from_result(traits::eof()); }
  pplx::task<size_t> _getn(uint8_t*, size_t) override { return pplx::task_from_result<size_t>(0); }
  size_t _scopy(uint8_t*, size_t) override { return 0; }
  pplx::task<bool> _sync() override { return pplx::task_from_result(true); }
  uint8_t* _alloc(size_t) override { return nullptr; }
  void _commit(size_t) override {}

 private:
  // A write waiting for the consumer.
  struct Piece {
    std::string_view data;
    std::string copy;  // owns `data` when the writer asked for a copy
    pplx::task_completion_event<size_t> written;
  };

  pplx::task<size_t> hand(Piece piece);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Piece> pending_;   // written, not yet taken (cpprestsdk has one write in flight)
  std::optional<Piece> taken_;  // handed to the consumer, released by its next call
  bool finished_ = false;
  bool aborted_ = false;
  std::exception_ptr failure_;
};

}  // namespace gpuscale::prom
