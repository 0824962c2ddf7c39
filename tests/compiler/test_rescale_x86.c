/* White-box test of x86-64's two short AVX-512 int8 rescales against the
 * scalar reference (uk_apply_scale / uk_requant, TOSA's apply_scale_32):
 * the 1x1 convs' pw_apply (conv_s8.h, made by conv_s8_pw.c's pw_make;
 * shifts 32-62, any multiplier) and pw_apply31 (conv_s8_pw.c, with
 * pw_make31; shifts 31-62, some 31) and the depthwise row kernels' dwq_apply
 * (depthwise_s8_avx512.c; shifts 33-54, multipliers >= 0, as uk_dw_plan
 * asks).  Both fold the rounding term's sign into one 64-bit constant, so a
 * mistake shows only on some ties or extremes, which model outputs may
 * never hit: here random accumulators over the whole int32 range, values
 * next to each rounding tie, and every accumulator in [-2^20, 2^20) for a
 * few multiplier / shift pairs.  Needs AVX-512 and VNNI: isa_gate.c's
 * main() checks the CPU and runs this only where it has them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/x86/conv_s8_pw.c"
#include "backends/x86/depthwise_s8_avx512.c"

#include <cmocka.h>

enum { ROUNDS = 600, VECTORS = 256, SWEEP = 1 << 20 };

typedef struct case_ {
  tinyml_uk_params_t p;
  uk_ctx_t c;
  int32_t bias[16], mult[16], shift[16];
} case_t;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void case_init(case_t *k) {
  memset(k, 0, sizeof(*k));
  k->p.oc = k->p.ic = 16;
  k->p.act_min = -128;
  k->p.act_max = 127;
  k->c.p = &k->p;
  k->c.bias = k->bias;
  k->c.mult = k->mult;
  k->c.shift = k->shift;
}

/* Multipliers as quantizers make them (2^30..2^31-1) and the edges. */
static int32_t some_mult(int allow_negative) {
  const uint64_t r = rnd();
  int32_t m;
  switch (r % 6) {
    case 0: m = 1 << 30; break;
    case 1: m = 0x7fffffff; break;
    case 2: m = (int32_t)(1u << (rnd() % 31)); break;
    case 3: m = (int32_t)(rnd() % 0x80000000u); break;
    default: m = (int32_t)((1u << 30) + rnd() % (1u << 30)); break;
  }
  return allow_negative && (r >> 8) % 4 == 0 ? -m : m;
}

/* Accumulator j of vector i: small ones, the whole range, or one of the
 * three values next to a tie of v * mult / 2^s. */
static int32_t some_acc(int i, int32_t mult, int32_t shift) {
  const uint64_t r = rnd();
  if (i % 4 == 0) return (int32_t)(r % (1u << 21)) - (1 << 20);
  if (i % 4 == 1 || mult == 0) return (int32_t)(uint32_t)r;
  /* |k| * 2^(shift-1) / |mult| within int32 */
  const __int128 m = mult < 0 ? -(__int128)mult : mult;
  __int128 kmax = (m << 31) >> (shift - 1);
  if (kmax > 2000) kmax = 2000;
  const int64_t k = (int64_t)(rnd() % (uint64_t)(2 * kmax + 1)) - (int64_t)kmax;
  const __int128 v = ((__int128)k << (shift - 1)) / mult + (__int128)(r % 3) - 1;
  return v > INT32_MAX || v < INT32_MIN ? (int32_t)(uint32_t)r : (int32_t)v;
}

/* pw_apply, or with s31 pw_apply31 (and out_zp after it with zadd). */
static int pw_check(const case_t *k, const int32_t *v, int zadd, int s31, long *bad) {
  pw_rq_t r;
  pw_x_t x;
  int32_t got[16];
  if (s31) {
    pw_make31(&k->c, 0, &r, &x);
    __m512i y = pw_apply31(&r, &x, _mm512_loadu_si512(v));
    _mm512_storeu_si512(got, zadd ? _mm512_add_epi32(y, r.zp) : y);
  } else {
    pw_make(&k->c, 0, &r);
    _mm512_storeu_si512(got, pw_apply_z(&r, _mm512_loadu_si512(v), zadd));
  }
  for (int j = 0; j < 16; ++j) {
    const int32_t want = uk_apply_scale(v[j], k->mult[j], k->shift[j]) + k->p.out_zp;
    if (got[j] != want && (*bad)++ < 8)
      printf("pw_apply: v %d mult %d shift %d out_zp %d: %d, want %d\n", v[j], k->mult[j],
             k->shift[j], k->p.out_zp, got[j], want);
  }
  return 16;
}

static int dw_check(const case_t *k, const int32_t *acc, long *bad) {
  rq16_t q;
  if (!rq16_at(&k->c, 0, &q)) {
    printf("rq16_at refused shifts it should take\n");
    ++*bad;
    return 0;
  }
  const dwq_t d = dwq_make(&k->p, &q, q.bias);
  int32_t v[16];
  int8_t got[16];
  /* the kernels' accumulators start at the (folded) bias: v is the sum */
  for (int j = 0; j < 16; ++j) v[j] = (int32_t)((uint32_t)acc[j] + (uint32_t)k->bias[j]);
  _mm_storeu_si128((__m128i *)(void *)got, dwq_apply(&d, _mm512_loadu_si512(v)));
  for (int j = 0; j < 16; ++j) {
    const int32_t want = uk_requant(&k->p, v[j], k->mult[j], k->shift[j]);
    if (got[j] != want && (*bad)++ < 8)
      printf("dwq_apply: v %d mult %d shift %d out_zp %d: %d, want %d\n", v[j], k->mult[j],
             k->shift[j], k->p.out_zp, got[j], want);
  }
  return 16;
}

/* Random channels: pw with shifts 32-62 (out_zp folded at <= 54, added
 * after above, as pw_conv does), every fourth round 31-62 with some 31
 * (pw_conv31's), dw with shifts 33-54 and mult >= 0. */
static long random_cases(long *bad) {
  long n = 0;
  case_t k;
  for (int round = 0; round < ROUNDS; ++round) {
    const int dw = round % 2, s31 = round % 4 == 2;
    case_init(&k);
    k.p.out_zp = (int32_t)(rnd() % 256) - 128;
    if (round % 8 == 1) {
      k.p.act_min = -(int32_t)(rnd() % 128);
      k.p.act_max = (int32_t)(rnd() % 128);
    }
    int zadd = 0;
    for (int j = 0; j < 16; ++j) {
      k.bias[j] = dw ? (int32_t)(rnd() % 200001) - 100000 : 0;
      k.mult[j] = some_mult(!dw);
      k.shift[j] = dw ? 33 + (int32_t)(rnd() % 22) : 32 + (int32_t)(rnd() % 31);
      if (s31 && rnd() % 3 == 0) k.shift[j] = 31;
      zadd |= k.shift[j] > PW_FOLD_MAX_SHIFT;
    }
    for (int i = 0; i < VECTORS; ++i) {
      int32_t v[16];
      for (int j = 0; j < 16; ++j) v[j] = some_acc(i, k.mult[j], k.shift[j]) - k.bias[j];
      n += dw ? dw_check(&k, v, bad) : pw_check(&k, v, zadd, s31, bad);
    }
  }
  return n;
}

/* Every accumulator in [-SWEEP, SWEEP) for a few (mult, shift) pairs. */
static long sweeps(long *bad) {
  static const int32_t pairs[][2] = {
      {1 << 30, 33}, {0x7fffffff, 54}, {1518500250, 37}, {1 << 20, 34}, {1, 33}, {1 << 30, 40}};
  long n = 0;
  case_t k;
  for (unsigned t = 0; t < sizeof(pairs) / sizeof(pairs[0]); ++t) {
    case_init(&k);
    k.p.out_zp = -7;
    for (int j = 0; j < 16; ++j) {
      k.mult[j] = pairs[t][0];
      k.shift[j] = pairs[t][1];
    }
    for (int32_t v0 = -SWEEP; v0 < SWEEP; v0 += 16) {
      int32_t v[16];
      for (int j = 0; j < 16; ++j) v[j] = v0 + j;
      n += dw_check(&k, v, bad);
      n += pw_check(&k, v, 0, 0, bad);
    }
  }
  /* shift 31 in half the lanes (pw_apply31) */
  static const int32_t mults31[] = {1 << 30, 0x7fffffff, -1518500250, 1 << 20};
  for (unsigned t = 0; t < sizeof(mults31) / sizeof(mults31[0]); ++t) {
    case_init(&k);
    k.p.out_zp = 5;
    for (int j = 0; j < 16; ++j) {
      k.mult[j] = mults31[t];
      k.shift[j] = j % 2 ? 31 : 32 + j;
    }
    for (int32_t v0 = -SWEEP; v0 < SWEEP; v0 += 16) {
      int32_t v[16];
      for (int j = 0; j < 16; ++j) v[j] = v0 + j;
      n += pw_check(&k, v, 1, 1, bad);
    }
  }
  return n;
}

static void test_rescales(void **state) {
  (void)state;
  long bad = 0;
  const long n = random_cases(&bad) + sweeps(&bad);
  print_message("%ld of %ld rescaled lanes differ from uk_apply_scale / uk_requant\n", bad, n);
  assert_true(n > 0);
  assert_int_equal(bad, 0);
}

int isa_tests(void);
int isa_tests(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rescales)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
