#include "gunzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <memory>
#include <string>

namespace gpuscale::prom {
namespace gunzip_test {

// `text` in the gzip format (zlib's deflate with a gzip wrapper), as Prometheus sends it.
std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(
      deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// `body` in pieces of `size` bytes.
BodyPieces piecesOf(const std::string& body, size_t size) {
  auto at = std::make_shared<size_t>(0);
  return [&body, size, at] {
    std::string_view piece = std::string_view(body).substr(std::min(*at, body.size()), size);
    *at += piece.size();
    return piece;
  };
}

// Everything `gunzip` yields.
std::string drain(Gunzip& gunzip) {
  std::string out;
  for (auto piece = gunzip.next(); !piece.empty(); piece = gunzip.next()) out += piece;
  return out;
}

TEST(GunzipTest, InflatesWhateverThePieceSizes) {
  std::string text;
  for (int i = 0; i < 40000; ++i)
    text += R"({"__name__":"m","pod":"pod-)" + std::to_string(i) + "\"},";
  const std::string compressed = gzip(text);
  ASSERT_LT(compressed.size(), text.size() / 5);
  for (size_t size : {size_t{1}, size_t{7}, size_t{2048}, compressed.size()}) {
    BodyPieces pieces = piecesOf(compressed, size);
    Gunzip gunzip(pieces);
    EXPECT_EQ(drain(gunzip), text) << "pieces of " << size;
    EXPECT_EQ(gunzip.error(), "") << "pieces of " << size;
  }
}

TEST(GunzipTest, BadInputIsAnErrorNotData) {
  const std::string compressed = gzip(std::string(100000, 'x'));
  struct Row {
    const char* what;
    std::string body;
    const char* error;
  } rows[] = {
      {"not gzip at all", "<html>this is not gzip</html>", "gzip: "},
      {"cut short", compressed.substr(0, compressed.size() / 2), "gzip body cut short"},
      {"empty", "", "gzip body cut short"},
  };
  for (const auto& row : rows) {
    BodyPieces pieces = piecesOf(row.body, 64);
    Gunzip gunzip(pieces);
    drain(gunzip);
    EXPECT_NE(gunzip.error().find(row.error), std::string::npos)
        << row.what << ": " << gunzip.error();
  }
}

}  // namespace gunzip_test
}  // namespace gpuscale::prom
