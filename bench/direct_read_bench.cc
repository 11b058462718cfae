// direct_read_bench: cold-cache read bandwidth of DirectReader, io_uring vs pread threads,
// for several chunk sizes. Reads a whole file in layer-sized requests with two requests in
// flight (the streamer's double buffering), after dropping the file from the page cache.
//
//   direct_read_bench [--file PATH] [--size-mib N] [--request-mib N] [--repeats N]
//
// Without --file, creates (once) a file of --size-mib MiB under build/bench-data. Prints a
// table on stdout and one JSON line per configuration; never passes or fails on time.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/timer.h"
#include "weights/direct_reader.h"

namespace {

using sf::DirectReader;
using sf::DirectReaderOptions;
using Backend = DirectReaderOptions::Backend;

bool ensure_file(const std::string& path, uint64_t size) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) == size) return true;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  std::vector<uint64_t> block((8u << 20) / 8);
  uint64_t x = 88172645463325252ull;
  for (uint64_t done = 0; done < size; done += block.size() * 8) {
    for (auto& v : block) v = (x ^= x << 13, x ^= x >> 7, x ^= x << 17);  // xorshift: incompressible
    const size_t n = static_cast<size_t>(std::min<uint64_t>(block.size() * 8, size - done));
    if (::write(fd, block.data(), n) != static_cast<ssize_t>(n)) {
      ::close(fd);
      return false;
    }
  }
  fsync(fd);
  ::close(fd);
  return true;
}

void drop_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  fsync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

struct Config {
  Backend backend;
  size_t chunk;
  int parallelism;  // queue depth (io_uring) or threads (pread)
};

struct Measurement {
  double seconds = 0, busy = 0;
  uint64_t bytes = 0;
  bool direct = false;
  std::string error;
};

Measurement measure(const std::string& path, const Config& c, uint64_t request) {
  Measurement m;
  DirectReaderOptions o;
  o.backend = c.backend;
  o.chunk_bytes = c.chunk;
  o.queue_depth = c.parallelism;
  o.pread_threads = c.parallelism;
  drop_cache(path);
  auto opened = DirectReader::open(path, o);
  if (!opened.ok()) {
    m.error = opened.status().message();
    return m;
  }
  DirectReader& r = *opened.value();
  m.direct = r.direct();
  sf::AlignedBuffer bufs[2] = {sf::AlignedBuffer(request, 4096), sf::AlignedBuffer(request, 4096)};
  const uint64_t size = r.file_size() / 4096 * 4096;
  uint64_t tickets[2] = {0, 0};
  sf::Stopwatch sw;
  uint64_t offset = 0;
  int slot = 0;
  for (; offset < size; offset += request, slot ^= 1) {
    if (tickets[slot] != 0 && !r.wait(tickets[slot]).ok()) m.error = "read failed";
    tickets[slot] = r.submit(bufs[slot].data(), offset, std::min(request, size - offset));
  }
  for (uint64_t t : tickets)
    if (t != 0 && !r.wait(t).ok()) m.error = "read failed";
  m.seconds = sw.elapsed();
  m.bytes = r.bytes_read();
  m.busy = r.busy_seconds();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  uint64_t size_mib = 1024, request_mib = 64;
  int repeats = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--file")
      path = argv[i + 1];
    else if (k == "--size-mib")
      size_mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--request-mib")
      request_mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--repeats")
      repeats = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (path.empty()) {
    path = (std::filesystem::current_path() / "bench-data" / "direct_read_bench.bin").string();
    if (!ensure_file(path, size_mib << 20)) {
      std::fprintf(stderr, "error: cannot create %s\n", path.c_str());
      return 1;
    }
  }
  const uint64_t request = request_mib << 20;
  std::vector<Config> configs;
  for (size_t chunk : {size_t{256} << 10, size_t{1} << 20, size_t{4} << 20}) {
    configs.push_back({Backend::kIoUring, chunk, 16});
    configs.push_back({Backend::kPread, chunk, 2});
    configs.push_back({Backend::kPread, chunk, 8});
  }
  std::printf("file %s, %llu MiB requests, 2 in flight, cold cache, best of %d\n", path.c_str(),
              static_cast<unsigned long long>(request_mib), repeats);
  std::printf("%-9s %6s %5s %6s %8s %10s %9s\n", "backend", "chunk", "par", "direct", "GB/s", "busy GB/s", "seconds");
  std::vector<std::string> json;
  for (const Config& c : configs) {
    Measurement best;
    for (int rep = 0; rep < repeats; ++rep) {
      Measurement m = measure(path, c, request);
      if (rep == 0 || (m.error.empty() && m.seconds < best.seconds)) best = m;
    }
    const char* name = c.backend == Backend::kIoUring ? "io_uring" : "pread";
    if (!best.error.empty()) {
      std::printf("%-9s %5zuK %5d  error: %s\n", name, c.chunk >> 10, c.parallelism, best.error.c_str());
      continue;
    }
    const double gbs = best.bytes / best.seconds / 1e9, busy_gbs = best.bytes / best.busy / 1e9;
    std::printf("%-9s %5zuK %5d %6s %8.2f %10.2f %9.3f\n", name, c.chunk >> 10, c.parallelism,
                best.direct ? "yes" : "no", gbs, busy_gbs, best.seconds);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "{\"backend\":\"%s\",\"chunk_bytes\":%zu,\"parallelism\":%d,\"direct\":%s,\"bytes\":%llu,"
                  "\"seconds\":%.4f,\"gb_per_s\":%.3f,\"busy_gb_per_s\":%.3f}",
                  name, c.chunk, c.parallelism, best.direct ? "true" : "false",
                  static_cast<unsigned long long>(best.bytes), best.seconds, gbs, busy_gbs);
    json.push_back(line);
  }
  for (const std::string& j : json) std::printf("%s\n", j.c_str());
  return 0;
}
