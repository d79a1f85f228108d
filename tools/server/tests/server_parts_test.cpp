// The server's parts that need no network: the frame token bucket, the tick-time percentiles and
// which file of the web root a request target names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "server_stats.h"
#include "token_bucket.h"
#include "web_files.h"

namespace sightline::demo {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucket, TakesCapacityAtOnceThenRefillsContinuously) {
  const auto start = TokenBucket::Clock::now();
  TokenBucket bucket(60.0, 60.0, start);
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(bucket.take(start)) << i;
  EXPECT_FALSE(bucket.take(start));
  // 1/60 s later exactly one more token is there.
  EXPECT_TRUE(bucket.take(start + 17ms));
  EXPECT_FALSE(bucket.take(start + 17ms));
  // Never beyond capacity, however long it rested.
  const auto later = start + 1h;
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(bucket.take(later)) << i;
  EXPECT_FALSE(bucket.take(later));
}

TEST(TickTimes, PercentilesWithinOnePercentAndTheExactMaximum) {
  TickTimes times;
  EXPECT_EQ(times.percentile(0.99), 0.0);
  for (int i = 1; i <= 1000; ++i) times.add(0.01 * i);  // 0.01 .. 10 ms
  EXPECT_EQ(times.count(), 1000u);
  EXPECT_DOUBLE_EQ(times.max(), 10.0);
  EXPECT_NEAR(times.percentile(0.50), 5.0, 5.0 * 0.011);
  EXPECT_NEAR(times.percentile(0.99), 9.9, 9.9 * 0.011);
  EXPECT_LE(times.percentile(1.0), times.max());
  times.add(0.0);
  times.add(1e9);  // beyond the last bucket: still counted, the maximum exact
  EXPECT_DOUBLE_EQ(times.max(), 1e9);
}

TEST(ResidentKb, ReadsThisProcess) {
  const std::optional<std::int64_t> kb = resident_kb();
  ASSERT_TRUE(kb);
  EXPECT_GT(*kb, 0);
}

class WebFile : public ::testing::Test {
 protected:
  // base/secret.txt beside the root base/web.
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() / ("sightline-web-file-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(base_ / "web" / "js");
    std::ofstream(base_ / "web" / "index.html") << "<!doctype html>";
    std::ofstream(base_ / "web" / "js" / "main.js") << "export {};";
    std::ofstream(base_ / "secret.txt") << "outside";
    root_ = std::filesystem::canonical(base_ / "web");
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(base_, ignored);
  }
  std::filesystem::path base_;
  std::filesystem::path root_;
};

TEST_F(WebFile, NamesFilesUnderTheRoot) {
  EXPECT_EQ(web_file(root_, "/"), root_ / "index.html");
  EXPECT_EQ(web_file(root_, "/index.html?ws=ws://host/ws"), root_ / "index.html");
  EXPECT_EQ(web_file(root_, "/js/main.js"), root_ / "js" / "main.js");
  EXPECT_EQ(web_file(root_, "/js/%6Dain.js"), root_ / "js" / "main.js");
}

TEST_F(WebFile, RefusesWhatCouldLeaveTheRoot) {
  for (const char* target :
       {"", "index.html", "/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt", "/..%2Fsecret.txt",
        "/js\\..\\..\\secret.txt", "/%5C..%5Csecret.txt", "//etc/passwd", "/%2Fetc/passwd", "/index.html%00",
        "/%", "/%4", "/%zz", "/./index.html", "/js", "/missing.html", "http://host/index.html"}) {
    EXPECT_FALSE(web_file(root_, target)) << target;
  }
}

TEST(ContentType, ByExtension) {
  EXPECT_EQ(content_type("a/index.html"), "text/html");
  EXPECT_EQ(content_type("main.js"), "text/javascript");
  EXPECT_EQ(content_type("style.css"), "text/css");
  EXPECT_EQ(content_type("package.json"), "application/json");
  EXPECT_EQ(content_type("shot.png"), "image/png");
  EXPECT_EQ(content_type("icon.svg"), "image/svg+xml");
  EXPECT_EQ(content_type("notes.txt"), "application/octet-stream");
}

}  // namespace
}  // namespace sightline::demo
