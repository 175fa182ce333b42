/*
 * harness_data.c — element-level rules of the native harness: sizes of the ABI
 * dtypes, the seeded input generator, the poison bytes, exact fp16/bf16
 * conversions, the tolerance comparison, and the statistics of timing samples.
 *
 * Inputs. Every (seed, shape id, tensor name, copy index) has its own stream:
 * splitmix64 mixes the seed, an FNV-1a hash of "shape id \0 tensor name" and the
 * copy index into four words that seed xoshiro256**. Streams are independent of
 * each other and of evaluation order, so a failure reproduces from its seed and
 * shape alone, and adding a shape never changes another shape's inputs.
 *   floats: uniform on [-1, 1) (24 random bits for float32/16/bf16, 53 for float64;
 *           fp16 and bf16 are rounded to nearest-even from float32);
 *   signed ints: uniform on [-8, 8]; uint8: [0, 15]; bool: 0 or 1.
 * Small integers keep integer outputs (sums, products) far from overflow.
 *
 * Poison. Before every run each output byte is set to 0xFF for float types (a
 * NaN at every width: float32, float64, fp16 and bf16) and 0xA5 for the others,
 * so an element the kernel never writes can never equal the reference.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t hx_dtype_size(int32_t dtype)
{
    static const size_t sizes[] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 1};
    return dtype >= 0 && dtype < 10 ? sizes[dtype] : 0;
}

int hx_dtype_is_float(int32_t dtype)
{
    return dtype <= AKA_DT_BFLOAT16;
}

unsigned char hx_poison_byte(int32_t dtype)
{
    return hx_dtype_is_float(dtype) ? 0xFF : 0xA5;
}

/* ---- PRNG ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t hx_mix(uint64_t *state)
{
    return splitmix64(state);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t rng_next(rng *r) /* xoshiro256** */
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
    return h;
}

static void rng_seed(rng *r, uint64_t seed, const char *shape_id, const char *tensor, uint32_t copy)
{
    uint64_t h = fnv1a(0xCBF29CE484222325ull, shape_id, strlen(shape_id) + 1);
    uint64_t x = seed ^ fnv1a(h, tensor, strlen(tensor)) ^ ((uint64_t)copy << 40);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

/* ---- fp16 / bf16 ---- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40); /* keep NaN a NaN */
    u += 0x7FFFu + ((u >> 16) & 1u);         /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

/* float32 → IEEE binary16, round to nearest even (inputs here are in [-1, 1)). */
static uint16_t f32_to_f16(float f)
{
    uint32_t u = f32_bits(f), sign = (u >> 16) & 0x8000u;
    int32_t exp = (int32_t)((u >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = u & 0x7FFFFFu;
    if (((u >> 23) & 0xFF) == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) { /* subnormal or zero */
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp), half = mant >> shift,
                 rest = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        half += rest > mid || (rest == mid && (half & 1u));
        return (uint16_t)(sign | half);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1FFFu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u)); /* carries into the exponent */
    return (uint16_t)h;
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FFu;
    if (exp == 0x1F)
        return bits_f32(sign | 0x7F800000u | (mant << 13));
    if (exp == 0) {
        float v = ldexpf((float)mant, -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

/* ---- fill and load ---- */

static float uniform_f32(rng *r)
{
    return (float)(rng_next(r) >> 40) * 0x1p-23f - 1.0f;
}

static void fill_one(unsigned char *p, int32_t dtype, int64_t i, rng *r)
{
    switch (dtype) {
    case AKA_DT_FLOAT32:
        ((float *)p)[i] = uniform_f32(r);
        break;
    case AKA_DT_FLOAT64:
        ((double *)p)[i] = (double)(rng_next(r) >> 11) * 0x1p-52 - 1.0;
        break;
    case AKA_DT_FLOAT16:
        ((uint16_t *)p)[i] = f32_to_f16(uniform_f32(r));
        break;
    case AKA_DT_BFLOAT16:
        ((uint16_t *)p)[i] = f32_to_bf16(uniform_f32(r));
        break;
    case AKA_DT_INT8:
        ((int8_t *)p)[i] = (int8_t)((int)(rng_next(r) % 17) - 8);
        break;
    case AKA_DT_INT16:
        ((int16_t *)p)[i] = (int16_t)((int)(rng_next(r) % 17) - 8);
        break;
    case AKA_DT_INT32:
        ((int32_t *)p)[i] = (int32_t)(rng_next(r) % 17) - 8;
        break;
    case AKA_DT_INT64:
        ((int64_t *)p)[i] = (int64_t)(rng_next(r) % 17) - 8;
        break;
    case AKA_DT_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)(rng_next(r) % 16);
        break;
    default:
        ((uint8_t *)p)[i] = (uint8_t)(rng_next(r) & 1);
        break;
    }
}

void hx_fill(void *buf, const hx_tensor *t, uint64_t seed, const char *shape_id, uint32_t copy)
{
    rng r;
    rng_seed(&r, seed, shape_id, t->name, copy);
    if (t->dtype == AKA_DT_FLOAT32) { /* the common case, without a switch per element */
        float *f = buf;
        for (int64_t i = 0; i < t->numel; i++)
            f[i] = uniform_f32(&r);
        return;
    }
    for (int64_t i = 0; i < t->numel; i++)
        fill_one(buf, t->dtype, i, &r);
}

/*
 * Timed inputs are filled in chunks of FILL_CHUNK float32 elements, each from its own
 * stream (the chunk's index mixed into the seed), so that several threads can fill one
 * tensor and the values never depend on how many did. A shape's largest tensor (64 MiB on
 * row_sum_cuda) is filled before each of its ~230 runs per role, on one thread until now.
 * The chunk's index is multiplied by an odd constant, so no two (chunk, copy) pairs of a
 * tensor share a seed: no stream repeats within an evaluation.
 */
#define FILL_CHUNK       ((int64_t)1 << 20)
#define FILL_THREADS_MAX 8

/* One helper's share of a float32 tensor: chunks first, first + step, ... A chunk function
 * returns the index (in its chunk) of the first element it found wrong, or -1; fillers
 * always return -1. */
typedef struct fill_part {
    float *f;
    int64_t numel;
    int first, step;
    int64_t (*chunk)(const struct fill_part *p, int64_t chunk, float *f, int64_t n);
    uint64_t seed; /* hx_fill_timed: the stream's seed, shape id, tensor name, copy */
    const char *shape_id, *tensor;
    uint32_t copy, index; /* hx_fill_gen: the key is seed, the tensor's index */
    int64_t bad;          /* the first wrong element of this part's chunks, or -1 */
} fill_part;

static void fill_part_run(fill_part *p)
{
    p->bad = -1;
    for (int64_t c = p->first; c * FILL_CHUNK < p->numel; c += p->step) {
        int64_t at = c * FILL_CHUNK, n = p->numel - at < FILL_CHUNK ? p->numel - at : FILL_CHUNK;
        int64_t bad = p->chunk(p, c, p->f + at, n);
        if (bad >= 0) { /* chunks go up: the first one found is this part's first */
            p->bad = at + bad;
            return;
        }
    }
}

static void *fill_worker(void *arg)
{
    hx_pin_helper(); /* off the judge's CPU at once */
    fill_part_run(arg);
    return NULL;
}

static int g_threads_used = 1; /* only the judge's own thread calls fill_parallel */

int hx_fill_threads_used(void)
{
    return g_threads_used;
}

/* Every chunk of like's tensor through like.chunk, by up to FILL_THREADS_MAX threads: the
 * calling thread takes part 0, and any part whose thread could not start. The first wrong
 * element any chunk found, or -1. */
static int64_t fill_parallel(fill_part like)
{
    int chunks = (int)((like.numel + FILL_CHUNK - 1) / FILL_CHUNK), threads = hx_cpus();
    threads = threads > FILL_THREADS_MAX ? FILL_THREADS_MAX : threads;
    threads = threads > chunks ? chunks : threads; /* hx_cpus() >= 1; 0 chunks: nothing */
    fill_part part[FILL_THREADS_MAX];
    pthread_t tid[FILL_THREADS_MAX];
    int started = 1;
    int64_t bad = -1;
    for (int k = 0; k < threads; k++) {
        part[k] = like;
        part[k].first = k, part[k].step = threads;
    }
    while (started < threads &&
           pthread_create(&tid[started], NULL, fill_worker, &part[started]) == 0)
        started++;
    g_threads_used = started > g_threads_used ? started : g_threads_used;
    for (int k = 0; k < threads; k++)
        if (k == 0 || k >= started)
            fill_part_run(&part[k]);
    for (int k = 1; k < started; k++)
        pthread_join(tid[k], NULL);
    for (int k = 0; k < threads; k++)
        if (part[k].bad >= 0 && (bad < 0 || part[k].bad < bad))
            bad = part[k].bad;
    return bad;
}

static int64_t timed_chunk(const fill_part *p, int64_t c, float *f, int64_t n)
{
    rng r;
    rng_seed(&r, p->seed ^ ((uint64_t)c * 0xD1B54A32D192ED03ull), p->shape_id, p->tensor, p->copy);
    int64_t i = 0;
    for (; i + 1 < n; i += 2) { /* bits 40..63 and 16..39: 24 random bits each */
        uint64_t x = rng_next(&r);
        f[i] = (float)(x >> 40) * 0x1p-23f - 1.0f;
        f[i + 1] = (float)((x >> 16) & 0xFFFFFFu) * 0x1p-23f - 1.0f;
    }
    if (i < n)
        f[i] = uniform_f32(&r);
    return -1;
}

void hx_fill_timed(void *buf, const hx_tensor *t, uint64_t seed, const char *shape_id,
                   uint32_t copy)
{
    if (t->dtype != AKA_DT_FLOAT32) {
        hx_fill(buf, t, seed, shape_id, copy);
        return;
    }
    fill_parallel((fill_part){.f = buf,
                              .numel = t->numel,
                              .chunk = timed_chunk,
                              .seed = seed,
                              .shape_id = shape_id,
                              .tensor = t->name,
                              .copy = copy});
}

static int64_t gen_chunk(const fill_part *p, int64_t c, float *f, int64_t n)
{
    for (int64_t i = 0, at = c * FILL_CHUNK; i < n; i++)
        f[i] = hp_gen_f32(p->seed, p->index, (uint64_t)(at + i));
    return -1;
}

void hx_fill_gen(void *buf, const hx_tensor *t, uint64_t key, uint32_t tensor)
{
    fill_parallel(
        (fill_part){.f = buf, .numel = t->numel, .chunk = gen_chunk, .seed = key, .index = tensor});
}

/* Bit for bit: the values are compared as stored, so -0 is not 0 and a NaN is caught. By
 * blocks: a loop without an early exit generates a block a third faster than element by
 * element (26 against 40 ms for 2^24 elements on one core here), and memcmp scans it. */
#define CMP_BLOCK 1024
static int64_t gen_cmp_chunk(const fill_part *p, int64_t c, float *f, int64_t n)
{
    float want[CMP_BLOCK];
    for (int64_t b = 0; b < n; b += CMP_BLOCK) {
        int64_t m = n - b < CMP_BLOCK ? n - b : CMP_BLOCK, at = c * FILL_CHUNK + b;
        for (int64_t i = 0; i < m; i++)
            want[i] = hp_gen_f32(p->seed, p->index, (uint64_t)(at + i));
        if (memcmp(want, f + b, (size_t)m * sizeof(float)) == 0)
            continue;
        for (int64_t i = 0;; i++)
            if (memcmp(&want[i], &f[b + i], sizeof(float)) != 0)
                return b + i;
    }
    return -1;
}

int64_t hx_check_gen(const void *buf, const hx_tensor *t, uint64_t key, uint32_t tensor)
{
    /* Only read: fill_part's pointer is not const because fillers write through it. */
    return fill_parallel((fill_part){.f = (float *)(uintptr_t)buf,
                                     .numel = t->numel,
                                     .chunk = gen_cmp_chunk,
                                     .seed = key,
                                     .index = tensor});
}

/* ---- probes ---- */

static void store_float(void *buf, int32_t dtype, int64_t i, double v)
{
    if (dtype == AKA_DT_FLOAT32)
        ((float *)buf)[i] = (float)v;
    else if (dtype == AKA_DT_FLOAT64)
        ((double *)buf)[i] = v;
    else if (dtype == AKA_DT_FLOAT16)
        ((uint16_t *)buf)[i] = f32_to_f16((float)v);
    else
        ((uint16_t *)buf)[i] = f32_to_bf16((float)v);
}

/* The transform is applied to the generator's output, so a probe case reproduces from its
 * seed and its probe alone, like any case. */
void hx_probe_apply(void *buf, const hx_tensor *t, const hx_probe *pr)
{
    if (!pr || !hx_dtype_is_float(t->dtype))
        return;
    for (int64_t i = 0; i < t->numel; i++)
        store_float(buf, t->dtype, i, pr->offset + pr->scale * hx_load(buf, t->dtype, i));
    int64_t row = t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
    for (int64_t i = 0; pr->constant_rows && row > 1 && i < t->numel; i++)
        if (i % row)
            store_float(buf, t->dtype, i, hx_load(buf, t->dtype, i - i % row));
}

double hx_rel_l2(const void *got, const void *want, const hx_tensor *t)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double g = hx_load(got, t->dtype, i), w = hx_load(want, t->dtype, i);
        if (!isfinite(w) || !isfinite(g)) {
            if (!(isnan(w) && isnan(g)) && g != w)
                return INFINITY;
            continue;
        }
        num += (g - w) * (g - w);
        den += w * w;
    }
    if (num == 0)
        return 0;
    return den > 0 ? sqrt(num / den) : INFINITY;
}

double hx_load(const void *buf, int32_t dtype, int64_t i)
{
    switch (dtype) {
    case AKA_DT_FLOAT32:
        return ((const float *)buf)[i];
    case AKA_DT_FLOAT64:
        return ((const double *)buf)[i];
    case AKA_DT_FLOAT16:
        return f16_to_f32(((const uint16_t *)buf)[i]);
    case AKA_DT_BFLOAT16:
        return bits_f32((uint32_t)((const uint16_t *)buf)[i] << 16);
    case AKA_DT_INT8:
        return ((const int8_t *)buf)[i];
    case AKA_DT_INT16:
        return ((const int16_t *)buf)[i];
    case AKA_DT_INT32:
        return ((const int32_t *)buf)[i];
    case AKA_DT_INT64:
        return (double)((const int64_t *)buf)[i];
    default:
        return ((const uint8_t *)buf)[i];
    }
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hx_median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof(*s)), m;
    memcpy(s, v, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), cmp_double);
    m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

double hx_quantile(const double *v, int n, double q)
{
    double *s = malloc((size_t)n * sizeof(*s)), r;
    int i = (int)(q * (n - 1) + 0.5);
    memcpy(s, v, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), cmp_double);
    r = s[i < 0 ? 0 : i >= n ? n - 1 : i];
    free(s);
    return r;
}

double hx_cv(const double *v, int n)
{
    double mean = 0, var = 0;
    if (n < 2)
        return 0;
    for (int i = 0; i < n; i++)
        mean += v[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (v[i] - mean) * (v[i] - mean);
    return mean > 0 ? sqrt(var / (n - 1)) / mean : 0;
}

/* ---- comparison ---- */

/* Does element i still hold the poison bytes? (Tells "never written" apart from "wrong".) */
static int is_poison(const void *buf, int32_t dtype, int64_t i)
{
    size_t sz = hx_dtype_size(dtype);
    const unsigned char *p = (const unsigned char *)buf + (size_t)i * sz;
    for (size_t k = 0; k < sz; k++)
        if (p[k] != hx_poison_byte(dtype))
            return 0;
    return 1;
}

/*
 * |got - want| <= atol + rtol * |want|, element by element. NaN equals only NaN
 * and an infinity only the same infinity: a NaN or Inf on one side alone is a
 * mismatch whatever the tolerance. max_abs / max_rel cover the finite pairs;
 * rel = |diff| / max(|want|, atol, 1e-12) so that zeros in the reference do not
 * turn a tiny absolute error into an infinite relative one.
 */
/* One element pair: 1 when it passes; the finite errors into c. */
static inline int pair_ok(double a, double b, const hx_tensor *t, hx_cmp *c)
{
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b))
        return (isnan(a) && isnan(b)) || a == b;
    double d = fabs(a - b), den = fmax(fabs(b), fmax(t->atol, 1e-12));
    if (d > c->max_abs)
        c->max_abs = d;
    if (d / den > c->max_rel)
        c->max_rel = d / den;
    return d <= t->atol + t->rtol * fabs(b);
}

static void note_bad(hx_cmp *c, const void *got, const hx_tensor *t, int64_t i, double a, double b)
{
    if (c->bad++ == 0) {
        c->first_bad = i;
        c->got = a;
        c->want = b;
        c->first_poison = is_poison(got, t->dtype, i);
    }
}

void hx_compare(const void *got, const void *want, const hx_tensor *t, hx_cmp *c)
{
    memset(c, 0, sizeof(*c));
    c->first_bad = -1;
    if (memcmp(got, want, t->bytes) == 0)
        return; /* bit-identical: every element passes with no error (NaN matches NaN) */
    if (t->dtype == AKA_DT_FLOAT32) { /* the common case, without a switch per element */
        const float *g = got, *w = want;
        for (int64_t i = 0; i < t->numel; i++)
            if (!pair_ok(g[i], w[i], t, c))
                note_bad(c, got, t, i, g[i], w[i]);
        return;
    }
    for (int64_t i = 0; i < t->numel; i++) {
        double a = hx_load(got, t->dtype, i), b = hx_load(want, t->dtype, i);
        if (!pair_ok(a, b, t, c))
            note_bad(c, got, t, i, a, b);
    }
}

/* "[r, c]" coordinates of a flat row-major index. */
void hx_coords(const hx_tensor *t, int64_t flat, char *out, size_t n)
{
    int64_t idx[AKA_MAX_DIMS];
    size_t len = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        idx[d] = flat % t->shape[d];
        flat /= t->shape[d];
    }
    len += (size_t)snprintf(out, n, "[");
    for (int d = 0; d < t->ndim && len < n; d++)
        len += (size_t)snprintf(out + len, n - len, d ? ", %lld" : "%lld", (long long)idx[d]);
    if (len < n)
        snprintf(out + len, n - len, "]");
}
