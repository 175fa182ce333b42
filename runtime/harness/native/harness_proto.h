/*
 * harness_proto.h — the shared-memory protocol between aka's native judge and
 * its two runners (the reference runner and the candidate runner).
 *
 * The judge creates one memfd per runner and hands it over as descriptor
 * HP_FD; nothing else is shared. The mapping holds, in order:
 *
 *   [hp_ctl, 4 KiB]  the handshake words and one request / reply
 *   [hp_desc]        the current shape: ids, dims, params, tensor shapes and the
 *                    offset of every tensor of every slot in this mapping
 *   [data]           the tensors of every slot, each aligned to HP_DATA_ALIGN
 *
 * One request is one cycle of four words, each on its own cache line:
 *
 *   judge                                    runner
 *   arm = n; wake arm                        (asleep on arm)
 *                                            ready = n
 *   sees ready; t_go = clock; go = n         (spinning on go, or asleep: go_spin_us)
 *                                            runs the request; done = n
 *   sees done; t_done = clock                futex-waits on arm (asleep)
 *
 * A waiter spins for a bounded time and then sleeps in FUTEX_WAIT after
 * setting the word's `sleeping` flag; the other side wakes it only when that
 * flag is set, so the fast path makes no system call inside the timed
 * interval. The runner must be asleep between requests: the judge checks it
 * (its CPU clock does not move), which is why the runner never spins on arm.
 *
 * The runner sees only what a kernel needs: shapes, dims, params, tensor
 * names, dtypes and bytes. Never tolerances, seeds, reference outputs, or
 * which runs are checked; those stay in the judge's private memory.
 *
 * Header-only, C11 and C++ clean (the judge, the runner loop and the CUDA
 * backend include it).
 */
#ifndef AKA_HARNESS_PROTO_H
#define AKA_HARNESS_PROTO_H

#include "aka_native_abi.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HP_MAGIC       0x6a616b61u /* "akaj" */
#define HP_VERSION     4u
#define HP_FD          3 /* the memfd in a runner */
#define HP_NAME        128
#define HP_MAX_TENSORS 64
#define HP_MAX_VALUES  64
#define HP_MAX_SLOTS   64
#define HP_CTL_BYTES   4096
#define HP_DATA_ALIGN  4096

/* Requests, in ctl.req. */
enum { HP_REQ_SETUP = 1, HP_REQ_SHAPE, HP_REQ_PREP, HP_REQ_CALL, HP_REQ_FETCH, HP_REQ_FETCH_OUT };

/* How a CUDA runner times a call (ctl.timing_ask, a SETUP request): CUDA events after a
 * hold; CUPTI's kernel span (first kernel start to last end, runner_cuda.cu); or events
 * without the hold (the candidate of a judge whose reference runner asked for spans and
 * could not start CUPTI: both roles then go through the same path). */
enum { HP_TIMING_EVENTS = 0, HP_TIMING_SPAN, HP_TIMING_EVENTS_UNHELD };

/* Reply statuses besides the entry's own AKA_* return values. */
#define HP_ST_DEVICE_ERROR (-1001) /* the device context is unusable */
#define HP_ST_OFF_STREAM   (-1002) /* work left outside params->stream */
#define HP_ST_NO_DEVICE    (-1003) /* SETUP: no device visible */
#define HP_ST_NO_MEMORY    (-1004) /* SHAPE: the slots do not fit */
#define HP_ST_BAD_REQUEST  (-1005) /* the descriptor or request is inconsistent */

/* One handshake word on its own cache line. */
typedef struct hp_word {
    uint32_t v;
    uint32_t sleeping; /* the waiter is (about to be) in FUTEX_WAIT on v */
    char pad[56];
} hp_word;

typedef struct hp_ctl {
    uint32_t magic, version;
    char pad0[56];
    hp_word arm, ready, go, done;
    int32_t req, slot; /* request (judge) */
    int32_t status;    /* reply (runner) */
    /* request (judge): how long the runner may spin waiting for go (µs, at most
     * HP_GO_SPIN_US); 0: sleep on it at once. With "cpu_time" the judge reads the
     * runner's CPU clock only while it sleeps, before go and after done: the kernel
     * brings a process clock up to date at a context switch, not when another process
     * reads it, so a read while the runner runs can lag by a whole scheduler tick. */
    int32_t go_spin_us;
    double reported_us;  /* CALL: the runner's own measurement */
    int64_t device_free; /* SETUP: free device memory in bytes; 0 on the CPU */
    int32_t timing_ask;  /* SETUP request (judge): HP_TIMING_* */
    int32_t timing_span; /* SETUP reply: 1 when calls are timed by kernel span */
    /* PREP request (judge), CUDA: the inputs whose bit is set in gen_tensors are
     * generated on the device from gen_key (hp_gen_f32) instead of copied from the
     * mapping; 0: every input is copied. Set for the timed runs' float32 inputs. */
    uint64_t gen_key, gen_tensors;
    char error[512]; /* reply text for a non-zero status */
} hp_ctl;

typedef struct hp_value {
    char name[HP_NAME];
    int32_t is_float, pad;
    int64_t i;
    double f;
} hp_value;

typedef struct hp_tensor {
    char name[HP_NAME];
    int32_t dtype, ndim;
    int64_t shape[AKA_MAX_DIMS];
    uint64_t bytes;
    uint32_t poison; /* the byte outputs are filled with before a call */
    uint32_t pad;
} hp_tensor;

typedef struct hp_desc {
    char shape_id[HP_NAME];
    int32_t n_dims, n_params, n_in, n_out, slots, pad;
    hp_value dims[HP_MAX_VALUES], params[HP_MAX_VALUES];
    hp_tensor in[HP_MAX_TENSORS], out[HP_MAX_TENSORS];
    uint64_t in_off[HP_MAX_SLOTS][HP_MAX_TENSORS]; /* from the start of the mapping */
    uint64_t out_off[HP_MAX_SLOTS][HP_MAX_TENSORS];
} hp_desc;

#define HP_DESC_BYTES (((sizeof(hp_desc) + HP_DATA_ALIGN - 1) / HP_DATA_ALIGN) * HP_DATA_ALIGN)
#define HP_DATA_START ((uint64_t)HP_CTL_BYTES + HP_DESC_BYTES)

#if defined(__CUDACC__)
#define HP_HOST_DEVICE __host__ __device__
#else
#define HP_HOST_DEVICE
#endif

/*
 * Element i of input tensor `tensor` of a timed run whose key is `key`: uniform on
 * [-1, 1) with 24 random bits, as hx_fill gives float32. A counter-based function (the
 * splitmix64 finalizer of key, tensor and index), so the CUDA runner fills a timed input on
 * the device in one pass and the judge computes the same bits on the host for the runs
 * whose inputs it compares. Every step is exact in float (a 24-bit integer times a power of
 * two, minus 1), so a fused multiply-add changes nothing.
 */
static inline HP_HOST_DEVICE float hp_gen_f32(uint64_t key, uint32_t tensor, uint64_t i)
{
    uint64_t z =
        key + (uint64_t)(tensor + 1) * 0xD1B54A32D192ED03ull + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * 0x1p-23f - 1.0f;
}

static inline uint32_t hp_load(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static inline void hp_store(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static inline void hp_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* FUTEX_WAIT on a shared mapping (no FUTEX_PRIVATE_FLAG: two processes). */
static inline long hp_futex_wait(uint32_t *p, uint32_t seen, const struct timespec *timeout)
{
    return syscall(SYS_futex, p, FUTEX_WAIT, seen, timeout, NULL, 0);
}

/* Wake every waiter; returns how many were woken. */
static inline long hp_futex_wake(uint32_t *p)
{
    return syscall(SYS_futex, p, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Spin at most this long (us) on `go` before sleeping: the judge writes go right after it
 * sees ready, so an honest wait is well under a microsecond. The bound keeps the CPU time
 * an honest runner spends outside the judge's window small (judge_runner.c counts it). The pinger
 * spins as long. */
#define HP_GO_SPIN_US 20.0

/* The spin the judge allows before go (ctl.go_spin_us), clamped to [0, HP_GO_SPIN_US]. */
static inline double hp_go_spin(const hp_ctl *ctl)
{
    int32_t us = ctl->go_spin_us;
    return us <= 0 ? 0 : us > HP_GO_SPIN_US ? HP_GO_SPIN_US : us;
}

/* CLOCK_MONOTONIC in microseconds: only for bounding a spin, never for timing. */
static inline double hp_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Wait until w holds n: spin up to spin_us, then sleep on the futex. The runners and the
 * pinger wait through this one function, so the pinger's CPU time per handshake is what an
 * honest runner's costs (judge_runner.c subtracts it from the runner's). */
static inline void hp_wait_word(hp_word *w, uint32_t n, double spin_us)
{
    uint32_t v;
    if (spin_us > 0)
        for (double t0 = hp_now_us(); hp_load(&w->v) != n;) {
            for (int i = 0; i < 64 && hp_load(&w->v) != n; i++)
                hp_pause();
            if (hp_now_us() - t0 > spin_us)
                break;
        }
    while ((v = hp_load(&w->v)) != n) {
        hp_store(&w->sleeping, 1);
        if (hp_load(&w->v) == v)
            hp_futex_wait(&w->v, v, NULL);
    }
    hp_store(&w->sleeping, 0);
}

/* Publish v in w and wake its waiter if it sleeps. */
static inline void hp_signal(hp_word *w, uint32_t v)
{
    hp_store(&w->v, v);
    if (hp_load(&w->sleeping))
        hp_futex_wake(&w->v);
}

#endif
