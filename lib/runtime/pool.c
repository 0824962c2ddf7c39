/* A fixed set of worker threads that share the workgroups of one dispatch
 * phase with the invoking thread.
 *
 * One 64-bit word, `claim`, holds the job's generation (high half) and a
 * bit per workgroup already taken (low half; the bits past the job's count
 * start out set, so the word alone says whether work is left).  The caller
 * writes the job's fields, then publishes a new `claim`; every thread, the
 * caller (index 0) included, takes workgroups with compare-and-swap on
 * `claim`, and reads the job's fields only once that succeeded: first its
 * own, the index-th of `threads` equal runs of workgroups (the compiler
 * gives each workgroup a contiguous block of rows, so a thread works on
 * the same rows from phase to phase, which stay in its cache), then any
 * that are left.  Each finished workgroup is counted in `done`; the caller
 * returns when `done` reaches the count, so it never waits for a thread
 * that took nothing: a worker the system has not scheduled costs the phase
 * little.  A job's fields stay unchanged while any of its workgroups runs,
 * and a late worker holding an old `claim` fails its compare-and-swap.
 * Waits spin for a while (phases follow each other within microseconds),
 * then sleep on a condition variable.  They never sched_yield(): a yield
 * lets every other runnable task on the CPU run first (EEVDF, Linux 6.6 on,
 * moves the yielder's deadline a slice later), so on a busy machine a
 * caller that yielded while its worker finished a workgroup waited out
 * other processes' slices, and MobileNetV2 on 2 threads took 5-8x as long
 * as with no yields (docs/PERF.md, "Threads on Intel (issue 27)").  A
 * sleeper is woken as soon as its work is ready instead.  The
 * sleep handshakes are Dekker-style: the sleeper announces itself, then
 * re-checks; the waker publishes, then checks for sleepers; both with
 * sequentially consistent atomics, so one of them always sees the other.
 * Nothing is allocated after creation. */
#include "pool.h"

#if !TINYML_FREESTANDING

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/status.h"

/* How long a thread waits actively before it sleeps: SPIN_ROUNDS pause
 * instructions (tens of microseconds: 57 us on Emerald Rapids, whose pause
 * takes 30 cycles). */
#define SPIN_ROUNDS 4000

/* claim = generation << 32 | taken, one bit of `taken` per workgroup */
#define TAKEN(c) ((uint32_t)(c))

struct tinyml__pool {
  pthread_mutex_t mutex;
  pthread_cond_t wake;   /* workers wait here for work */
  pthread_cond_t finish; /* the caller waits here for the last workgroup */
  _Atomic uint64_t claim;
  atomic_uint done;     /* workgroups of this job that have returned */
  atomic_uint sleepers; /* workers that may be waiting on `wake` */
  atomic_uint caller_sleeping;
  atomic_int stop;
  /* The job, written by the caller before it publishes `claim`. */
  tinyml_exe_entry_fn fn;
  void *const *bindings;
  uint32_t phase;
  atomic_uint count; /* <= 32 */
  uint32_t threads, started; /* threads counts the caller */
  struct worker {
    tinyml__pool_t *pool;
    uint32_t index;
    pthread_t thread;
  } workers[];
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#else
  atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Takes workgroups, its own first, while `c` (a value of `claim`) has
 * free ones; returns whether this thread finished the job's last one.  A
 * successful compare-and-swap means `c` is the current job, whose fields
 * then stay unchanged until its last workgroup returns. */
#if defined(__clang__) /* the kernels are not built with -fsanitize=function */
__attribute__((no_sanitize("function")))
#endif
static bool take_workgroups(tinyml__pool_t *p, uint32_t index, uint64_t c) {
  bool last = false;
  for (;;) {
    uint32_t avail = ~TAKEN(c);
    if (!avail) return last;
    /* Its own: the index-th of `threads` equal runs of workgroups (the
     * count is only a hint until the compare-and-swap succeeds). */
    uint32_t hint = atomic_load_explicit(&p->count, memory_order_relaxed);
    uint32_t lo = index * hint / p->threads, hi = (index + 1) * hint / p->threads;
    uint32_t own = (hi >= 32 ? 0xffffffffu : (1u << hi) - 1u) & ~((1u << lo) - 1u);
    uint32_t w = avail & own ? (uint32_t)__builtin_ctz(avail & own)
                             : 31u - (uint32_t)__builtin_clz(avail);
    if (!atomic_compare_exchange_weak(&p->claim, &c, c | 1u << w)) continue;
    uint32_t count = atomic_load_explicit(&p->count, memory_order_relaxed);
    p->fn(p->bindings, p->phase, w, count);
    last = atomic_fetch_add(&p->done, 1) + 1 == count;
    c = atomic_load(&p->claim);
  }
}

static bool has_work(uint64_t c) { return TAKEN(c) != 0xffffffffu; }

static uint64_t wait_for_work(tinyml__pool_t *p) {
  for (int i = 0; i < SPIN_ROUNDS; ++i) {
    uint64_t c = atomic_load_explicit(&p->claim, memory_order_acquire);
    if (has_work(c) || atomic_load_explicit(&p->stop, memory_order_relaxed)) return c;
    cpu_relax();
  }
  pthread_mutex_lock(&p->mutex);
  atomic_fetch_add(&p->sleepers, 1);
  uint64_t c = atomic_load(&p->claim);
  while (!has_work(c) && !atomic_load(&p->stop)) {
    pthread_cond_wait(&p->wake, &p->mutex);
    c = atomic_load(&p->claim);
  }
  atomic_fetch_sub(&p->sleepers, 1);
  pthread_mutex_unlock(&p->mutex);
  return c;
}

static void *worker_main(void *arg) {
  struct worker *self = arg;
  tinyml__pool_t *p = self->pool;
  for (;;) {
    uint64_t c = wait_for_work(p);
    if (atomic_load(&p->stop)) return NULL;
    if (take_workgroups(p, self->index, c) && atomic_load(&p->caller_sleeping)) {
      pthread_mutex_lock(&p->mutex);
      pthread_cond_signal(&p->finish);
      pthread_mutex_unlock(&p->mutex);
    }
  }
}

void tinyml__pool_run(tinyml__pool_t *p, tinyml_exe_entry_fn fn, void *const *bindings,
                      uint32_t phase, uint32_t count) {
  p->fn = fn;
  p->bindings = bindings;
  p->phase = phase;
  atomic_store_explicit(&p->count, count, memory_order_relaxed);
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  uint64_t generation = (atomic_load_explicit(&p->claim, memory_order_relaxed) >> 32) + 1;
  uint64_t c = generation << 32 | (count >= 32 ? 0u : ~((1u << count) - 1u));
  atomic_store(&p->claim, c); /* releases the job's fields */
  if (atomic_load(&p->sleepers)) {
    pthread_mutex_lock(&p->mutex);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mutex);
  }
  take_workgroups(p, 0, c);
  for (int i = 0; i < SPIN_ROUNDS; ++i) {
    if (atomic_load_explicit(&p->done, memory_order_acquire) == count) return;
    cpu_relax();
  }
  pthread_mutex_lock(&p->mutex);
  atomic_store(&p->caller_sleeping, 1);
  while (atomic_load(&p->done) != count) pthread_cond_wait(&p->finish, &p->mutex);
  atomic_store(&p->caller_sleeping, 0);
  pthread_mutex_unlock(&p->mutex);
}

static void stop_and_join(tinyml__pool_t *p) {
  pthread_mutex_lock(&p->mutex);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mutex);
  for (uint32_t i = 0; i < p->started; ++i) pthread_join(p->workers[i].thread, NULL);
}

/* Workers run the same kernels as the invoking thread, which may use about
 * 136 KiB of stack (include/tinyml.h, tinyml_context_invoke), but a default
 * thread stack can be smaller: musl's is 128 KiB.  So a worker gets at
 * least WORKER_STACK, or the system's default where that is larger
 * (glibc: 8 MiB). */
#define WORKER_STACK (256u * 1024u)

static int worker_attr(pthread_attr_t *attr) {
  int rc = pthread_attr_init(attr);
  if (rc != 0) return rc;
  size_t size = 0;
  if (pthread_attr_getstacksize(attr, &size) != 0 || size < WORKER_STACK)
    rc = pthread_attr_setstacksize(attr, WORKER_STACK);
  if (rc != 0) pthread_attr_destroy(attr);
  return rc;
}

tinyml_status_t tinyml__pool_create(uint32_t workers, const tinyml_allocator_t *a,
                                    tinyml__pool_t **out) {
  tinyml__pool_t *p = tinyml__calloc(a, 1, sizeof(*p) + workers * sizeof(struct worker),
                                     _Alignof(tinyml__pool_t));
  if (!p) return TINYML_STATUS_MAKE(a, TINYML_STATUS_OUT_OF_MEMORY, "context: out of memory");
  p->threads = workers + 1;
  atomic_store(&p->claim, 0xffffffffu); /* generation 0: nothing to take */
  if (pthread_mutex_init(&p->mutex, NULL) != 0) {
    tinyml__free(a, p);
    return TINYML_STATUS_MAKE(a, TINYML_STATUS_OUT_OF_MEMORY, "context: cannot make a mutex");
  }
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->finish, NULL);
  /* Workers take no signals: the host's handlers stay on its own threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  int rc = worker_attr(&attr);
  const bool have_attr = rc == 0;
  while (rc == 0 && p->started < workers) {
    struct worker *w = &p->workers[p->started];
    w->pool = p;
    w->index = p->started + 1;
    if ((rc = pthread_create(&w->thread, &attr, worker_main, w)) != 0) break;
    p->started++;
  }
  if (have_attr) pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    uint32_t started = p->started;
    tinyml__pool_destroy(p, a);
    return TINYML_STATUS_MAKE(a, TINYML_STATUS_OUT_OF_MEMORY,
                              "context: cannot start thread %u of %u (%s)", started + 2,
                              workers + 1, strerror(rc));
  }
  *out = p;
  return TINYML_OK;
}

void tinyml__pool_destroy(tinyml__pool_t *p, const tinyml_allocator_t *a) {
  if (!p) return;
  stop_and_join(p);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->finish);
  pthread_mutex_destroy(&p->mutex);
  tinyml__free(a, p);
}

#endif
