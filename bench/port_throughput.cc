// port_throughput: how many of the instructions the VNNI matmul kernels are made of this CPU
// issues per cycle, alone and mixed with vpdpbusd. The panel kernels' design rests on these
// numbers (quant/vnni_row_panels-inl.h): which instructions compete with vpdpbusd for its
// pipes (float multiplies and fmas, vpmulld) and which are bound elsewhere (broadcasts from
// memory are loads). A measurement, not a test: nothing fails on a number.
//
// Each row runs one loop body of independent instructions (16 vpdpbusd accumulators, so
// their latency is hidden) 50 million times. The core clock is estimated from a chain of
// dependent integer adds (one a cycle), so "cycles" assume that clock for the whole run.
//
// usage: port_throughput [--json]
// x86-64 with AVX512-VNNI only; elsewhere it says so and exits 0.
#include <cstdio>
#include <cstring>
#include <ctime>

namespace {

double now_seconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

constexpr long kIterations = 50'000'000;

}  // namespace

#if defined(__x86_64__)

namespace {

alignas(64) int g_memory[64];

// Four dependent adds an iteration: the loop's time in cycles is 4 x kIterations.
double estimate_clock_hz() {
  long x = 0;
  const double t0 = now_seconds();
  for (long i = 0; i < kIterations; ++i) {
    __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  }
  return 4.0 * kIterations / (now_seconds() - t0);
}

// One instruction of each kind, writing register R (the asm operand names the memory).
#define SF_DPBUSD(R) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #R "\n\t"
#define SF_BCAST(R) "vpbroadcastd 4(%1), %%zmm" #R "\n\t"
#define SF_LOAD(R) "vmovdqu32 64(%1), %%zmm" #R "\n\t"
#define SF_MULLD(R) "vpmulld %%zmm30, %%zmm31, %%zmm" #R "\n\t"
#define SF_FMA(R) "vfmadd231ps %%zmm30, %%zmm31, %%zmm" #R "\n\t"
#define SF_MUL(R) "vmulps %%zmm30, %%zmm31, %%zmm" #R "\n\t"
#define SF_CVT(R) "vcvtdq2ps %%zmm30, %%zmm" #R "\n\t"
#define SF_AND(R) "vpandd %%zmm30, %%zmm31, %%zmm" #R "\n\t"
#define SF_SHIFT(R) "vpsrlw $4, %%zmm30, %%zmm" #R "\n\t"
#define SF_SHUFD(R) "vpshufd $0x55, %%zmm30, %%zmm" #R "\n\t"
#define SF_PERMD(R) "vpermd %%zmm30, %%zmm31, %%zmm" #R "\n\t"
#define SF_BCAST128(R) "vbroadcasti32x4 16(%1), %%zmm" #R "\n\t"
// clang-format does not settle on one layout for this macro.
// clang-format off
#define SF_DPBUSD16 \
  SF_DPBUSD(0) SF_DPBUSD(1) SF_DPBUSD(2) SF_DPBUSD(3) SF_DPBUSD(4) SF_DPBUSD(5) SF_DPBUSD(6) SF_DPBUSD(7) \
  SF_DPBUSD(8) SF_DPBUSD(9) SF_DPBUSD(10) SF_DPBUSD(11) SF_DPBUSD(12) SF_DPBUSD(13) SF_DPBUSD(14) SF_DPBUSD(15)
// clang-format on
#define SF_EIGHT(OP) OP(16) OP(17) OP(18) OP(19) OP(20) OP(21) OP(22) OP(23)
#define SF_FOUR(OP) OP(16) OP(17) OP(18) OP(19)

// Seconds for kIterations of `body` (a string literal of instructions).
#define SF_TIME_LOOP(body)                                                                                            \
  [] {                                                                                                                \
    const double t0 = now_seconds();                                                                                  \
    __asm__ volatile(                                                                                                 \
        "vpternlogd $0xff, %%zmm30, %%zmm30, %%zmm30\n\t"                                                             \
        "vpabsb %%zmm30, %%zmm31\n\t"                                                                                 \
        "mov %0, %%rcx\n"                                                                                             \
        "1:\n\t" body "dec %%rcx\n\tjnz 1b\n"                                                                         \
        :                                                                                                             \
        : "r"(kIterations), "r"(g_memory)                                                                             \
        : "rcx", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",   \
          "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", \
          "xmm23", "xmm30", "xmm31");                                                                                 \
    return now_seconds() - t0;                                                                                        \
  }()

struct Row {
  const char* body;
  int dpbusd;
  int others;
  double seconds;
};

__attribute__((target("avx512f,avx512vnni"))) void measure(Row* rows) {
  rows[0].seconds = SF_TIME_LOOP(SF_DPBUSD16);
  rows[1].seconds = SF_TIME_LOOP(SF_EIGHT(SF_BCAST) SF_EIGHT(SF_BCAST));
  rows[2].seconds = SF_TIME_LOOP(SF_EIGHT(SF_LOAD) SF_EIGHT(SF_LOAD));
  rows[3].seconds = SF_TIME_LOOP(SF_EIGHT(SF_MULLD) SF_EIGHT(SF_MULLD));
  rows[4].seconds = SF_TIME_LOOP(SF_EIGHT(SF_FMA) SF_EIGHT(SF_FMA));
  rows[5].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_EIGHT(SF_BCAST) SF_EIGHT(SF_BCAST));
  rows[6].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_EIGHT(SF_LOAD) SF_EIGHT(SF_LOAD));
  rows[7].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_FOUR(SF_MULLD));
  rows[8].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_FOUR(SF_FMA));
  rows[9].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_FOUR(SF_MUL));
  rows[10].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_FOUR(SF_CVT));
  rows[11].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_EIGHT(SF_AND) SF_EIGHT(SF_SHIFT));
  rows[12].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_EIGHT(SF_SHUFD) SF_EIGHT(SF_SHUFD));
  rows[13].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_EIGHT(SF_PERMD) SF_EIGHT(SF_PERMD));
  rows[14].seconds = SF_TIME_LOOP(SF_DPBUSD16 SF_FOUR(SF_BCAST128) SF_EIGHT(SF_SHUFD) SF_EIGHT(SF_SHUFD));
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  if (!__builtin_cpu_supports("avx512vnni")) {
    std::printf("port_throughput: this CPU has no AVX512-VNNI; nothing to measure\n");
    return 0;
  }
  Row rows[] = {
      {"16 vpdpbusd", 16, 0, 0},
      {"16 vpbroadcastd zmm, m32", 0, 16, 0},
      {"16 loads (zmm)", 0, 16, 0},
      {"16 vpmulld", 0, 16, 0},
      {"16 vfmadd231ps", 0, 16, 0},
      {"16 vpdpbusd + 16 vpbroadcastd m32", 16, 16, 0},
      {"16 vpdpbusd + 16 loads", 16, 16, 0},
      {"16 vpdpbusd + 4 vpmulld", 16, 4, 0},
      {"16 vpdpbusd + 4 vfmadd231ps", 16, 4, 0},
      {"16 vpdpbusd + 4 vmulps", 16, 4, 0},
      {"16 vpdpbusd + 4 vcvtdq2ps", 16, 4, 0},
      {"16 vpdpbusd + 8 vpandd + 8 vpsrlw", 16, 16, 0},
      {"16 vpdpbusd + 16 vpshufd", 16, 16, 0},
      {"16 vpdpbusd + 16 vpermd", 16, 16, 0},
      {"16 vpdpbusd + 4 vbroadcasti32x4 m128 + 16 vpshufd", 16, 20, 0},
  };
  const double hz = estimate_clock_hz();
  measure(rows);
  std::printf("core clock estimated at %.2f GHz (dependent adds); %ld iterations a row\n\n", hz / 1e9, kIterations);
  std::printf("| loop body | cycles an iteration | instructions a cycle |\n|---|--:|--:|\n");
  for (const Row& r : rows) {
    const double cycles = r.seconds * hz / kIterations;
    std::printf("| %s | %.2f | %.2f |\n", r.body, cycles, (r.dpbusd + r.others) / cycles);
  }
  if (json) {
    for (const Row& r : rows) {
      std::printf("json: {\"body\": \"%s\", \"cycles\": %.3f, \"clock_ghz\": %.3f}\n", r.body,
                  r.seconds * hz / kIterations, hz / 1e9);
    }
  }
  return 0;
}

#else

int main() {
  std::printf("port_throughput: x86-64 only (it times AVX512-VNNI instruction mixes)\n");
  return 0;
}

#endif
