/* Do this machine's two cores run in parallel right now?  A loop of
 * independent AVX2 FMAs (no memory traffic) runs on one thread, then on
 * two threads at once, each doing the same work.  The printed ratio of the
 * two times is about 1.0 when both cores run, and 2.0 when the threads
 * take turns (a shared VM whose other vCPU is busy or not really there).
 * docs/PERF.md, "Threads", gives it next to each speed-up it reports.
 *
 *   cc -O2 -pthread -o cores_probe bench/cores_probe.c && ./cores_probe
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static volatile float g_sink;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* 8 independent FMA chains: bound by FMA throughput, not latency. */
__attribute__((target("avx2,fma"))) static void *spin(void *arg) {
  (void)arg;
  __m256 acc[8], b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  for (int i = 0; i < 8; ++i) acc[i] = _mm256_set1_ps((float)i);
  for (long n = 0; n < 40000000; ++n)
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(acc[i], b, c);
  float s = 0;
  for (int i = 0; i < 8; ++i) s += _mm256_cvtss_f32(acc[i]);
  g_sink = s;
  return NULL;
}

int main(void) {
  for (int round = 0; round < 3; ++round) {
    double t0 = now_s();
    spin(NULL);
    double one = now_s() - t0;
    pthread_t other;
    t0 = now_s();
    if (pthread_create(&other, NULL, spin, NULL) != 0) return 1;
    spin(NULL);
    pthread_join(other, NULL);
    double two = now_s() - t0;
    printf("cores_probe: 1 thread %.3f s, 2 threads %.3f s, ratio %.2f "
           "(1.0: in parallel, 2.0: taking turns)\n",
           one, two, two / one);
  }
  return 0;
}
