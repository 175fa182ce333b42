/*
 * runner_loop.c — main() of both runners (refrun: the operator's reference,
 * candrun: the candidate kernel) and the runner's half of the protocol in
 * harness_proto.h: wait for a request, answer it through the target backend
 * (rn_target), report, sleep until the next one.
 *
 * The judge starts a runner with: stdin /dev/null, stdout and stderr on the
 * job's stderr, the shared mapping as descriptor HP_FD, nothing else. The
 * runner knows the shape it is asked to run and nothing of the verdict.
 *
 * Before answering requests that run the entry, the runner confines itself
 * with a seccomp filter (install_filter): no new processes (fork, vfork, clone
 * without CLONE_THREAD, clone3, exec), no ptrace or cross-process memory
 * access, no signals to other processes. A kernel may start threads inside a
 * call; the judge sees every thread that is still alive after the call, while
 * a process could work on unseen after the call returned.
 */
#define _GNU_SOURCE
#include "harness_proto.h"
#include "runner.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

typedef struct runner {
    unsigned char *base;
    size_t bytes;
    hp_ctl *ctl;
    rn_shape shape;
    char *names; /* private copies of every name of the current shape */
    aka_value *values;
    int confined;   /* SETUP succeeded and the filter is in place */
    int have_shape; /* a SHAPE request succeeded */
} runner;

/* ---- confinement ---- */

#if defined(__x86_64__)
#define RN_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RN_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define DENY(nr, err)                                                                              \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                               \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((err)&SECCOMP_RET_DATA))
/* Allowed only when the first argument (a pid) is this process. */
#define SELF_ONLY(nr, pid)                                                                         \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4),                                               \
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),                \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (pid), 0, 1),                                          \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                                              \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

static int install_filter(void)
{
#ifdef RN_AUDIT_ARCH
    uint32_t self = (uint32_t)getpid();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RN_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        /* x32 system calls: another numbering, refuse them all. */
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        DENY(__NR_fork, EPERM),
        DENY(__NR_vfork, EPERM),
#endif
#ifdef __NR_clone3
        DENY(__NR_clone3, ENOSYS), /* flags in memory: make libc fall back to clone */
#endif
#ifdef __NR_pidfd_send_signal
        DENY(__NR_pidfd_send_signal, EPERM),
#endif
#ifdef __NR_pidfd_getfd
        DENY(__NR_pidfd_getfd, EPERM),
#endif
        DENY(__NR_execve, EPERM),
        DENY(__NR_execveat, EPERM),
        DENY(__NR_ptrace, EPERM),
        DENY(__NR_process_vm_readv, EPERM),
        DENY(__NR_process_vm_writev, EPERM),
        SELF_ONLY(__NR_kill, self),
        SELF_ONLY(__NR_tkill, self),
        SELF_ONLY(__NR_tgkill, self),
        SELF_ONLY(__NR_rt_sigqueueinfo, self),
        SELF_ONLY(__NR_rt_tgsigqueueinfo, self),
        /* clone: threads only (CLONE_THREAD in the flags, argument 0 on every ABI). */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    /* TSYNC: threads a device runtime started before this point are confined too. */
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0
               ? 0
               : -1;
#else
    return -1;
#endif
}

/* ---- the current shape ---- */

static void free_shape(runner *r)
{
    free(r->shape.host_in);
    free(r->shape.host_out);
    free(r->shape.poison);
    free(r->names);
    free(r->values);
    memset(&r->shape, 0, sizeof(r->shape));
    r->names = NULL;
    r->values = NULL;
    r->have_shape = 0;
}

static int tensor_ok(const runner *r, const hp_tensor *t, uint64_t off)
{
    return t->ndim >= 0 && t->ndim <= AKA_MAX_DIMS && t->dtype >= 0 && t->dtype <= AKA_DT_BOOL &&
           off >= HP_DATA_START && off % 64 == 0 && t->bytes <= r->bytes &&
           off <= r->bytes - t->bytes;
}

static int desc_ok(const runner *r, const hp_desc *d)
{
    if (d->n_in < 1 || d->n_in > HP_MAX_TENSORS || d->n_out < 1 || d->n_out > HP_MAX_TENSORS ||
        d->slots < 1 || d->slots > HP_MAX_SLOTS || d->n_dims < 0 || d->n_dims > HP_MAX_VALUES ||
        d->n_params < 0 || d->n_params > HP_MAX_VALUES)
        return 0;
    for (int s = 0; s < d->slots; s++) {
        for (int t = 0; t < d->n_in; t++)
            if (!tensor_ok(r, &d->in[t], d->in_off[s][t]))
                return 0;
        for (int t = 0; t < d->n_out; t++)
            if (!tensor_ok(r, &d->out[t], d->out_off[s][t]))
                return 0;
    }
    return 1;
}

/* A private, NUL-terminated copy of a name from the descriptor. */
static const char *keep_name(char **cursor, const char *src)
{
    char *dst = *cursor;
    memcpy(dst, src, HP_NAME - 1);
    dst[HP_NAME - 1] = '\0';
    *cursor += HP_NAME;
    return dst;
}

static void decode_values(aka_value *dst, const hp_value *src, int n, char **cursor)
{
    for (int i = 0; i < n; i++) {
        dst[i].name = keep_name(cursor, src[i].name);
        dst[i].is_float = src[i].is_float;
        dst[i].i = src[i].i;
        dst[i].f = src[i].f;
    }
}

static void decode_tensor(aka_tensor *dst, const hp_tensor *src, void *data, const char *name)
{
    memset(dst, 0, sizeof(*dst));
    dst->data = data;
    dst->ndim = src->ndim;
    dst->dtype = src->dtype;
    dst->name = name;
    for (int k = 0; k < src->ndim; k++)
        dst->shape[k] = src->shape[k];
}

static int decode_shape(runner *r, const hp_desc *d)
{
    rn_shape *s = &r->shape;
    int nv = d->n_dims + d->n_params, nt = d->n_in + d->n_out;
    r->names = malloc((size_t)(1 + nv + nt) * HP_NAME);
    r->values = calloc((size_t)(nv ? nv : 1), sizeof(aka_value));
    s->host_in = calloc((size_t)(d->slots * d->n_in), sizeof(aka_tensor));
    s->host_out = calloc((size_t)(d->slots * d->n_out), sizeof(aka_tensor));
    s->poison = calloc((size_t)d->n_out, 1);
    if (!r->names || !r->values || !s->host_in || !s->host_out || !s->poison)
        return HP_ST_NO_MEMORY;
    char *cur = r->names;
    s->n_in = d->n_in, s->n_out = d->n_out, s->slots = d->slots;
    s->params.abi_version = AKA_NATIVE_ABI_VERSION;
    s->params.shape_id = keep_name(&cur, d->shape_id);
    decode_values(r->values, d->dims, d->n_dims, &cur);
    decode_values(r->values + d->n_dims, d->params, d->n_params, &cur);
    s->params.dims = r->values, s->params.n_dims = d->n_dims;
    s->params.params = r->values + d->n_dims, s->params.n_params = d->n_params;
    const char *in_names = cur;
    for (int t = 0; t < nt; t++)
        keep_name(&cur, t < d->n_in ? d->in[t].name : d->out[t - d->n_in].name);
    for (int k = 0; k < d->slots; k++) {
        for (int t = 0; t < d->n_in; t++)
            decode_tensor(&s->host_in[k * d->n_in + t], &d->in[t], r->base + d->in_off[k][t],
                          in_names + (size_t)t * HP_NAME);
        for (int t = 0; t < d->n_out; t++)
            decode_tensor(&s->host_out[k * d->n_out + t], &d->out[t], r->base + d->out_off[k][t],
                          in_names + (size_t)(d->n_in + t) * HP_NAME);
    }
    for (int t = 0; t < d->n_out; t++)
        s->poison[t] = (unsigned char)d->out[t].poison;
    return 0;
}

/* ---- requests ---- */

/* The judge grows the mapping for a larger shape before sending it. */
static int remap(runner *r)
{
    struct stat st;
    if (fstat(HP_FD, &st) != 0)
        return -1;
    if ((size_t)st.st_size <= r->bytes)
        return 0;
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, HP_FD, 0);
    if (base == MAP_FAILED)
        return -1;
    munmap(r->base, r->bytes);
    r->base = base;
    r->bytes = (size_t)st.st_size;
    r->ctl = (hp_ctl *)r->base;
    return 0;
}

/*
 * Map every page of the shared memory into this process now: a page the runner touches
 * for the first time inside a call costs a page fault there (half a microsecond each,
 * milliseconds for a large shape), which would be timed. Read faults map shared memfd
 * pages writable, so reading one byte per page is enough and changes no data.
 */
static void prefault(const runner *r)
{
    long page = sysconf(_SC_PAGESIZE);
#ifdef MADV_POPULATE_WRITE
    if (madvise(r->base, r->bytes, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    for (size_t off = 0; page > 0 && off < r->bytes; off += (size_t)page)
        (void)*(volatile const unsigned char *)(r->base + off);
}

static int new_shape(runner *r, char *err, size_t n)
{
    /* One private copy of the descriptor: the entry runs on what was checked. */
    hp_desc *d = malloc(sizeof(*d));
    int rc;
    if (rn_target.release)
        rn_target.release();
    free_shape(r);
    if (!d || remap(r) != 0) {
        free(d);
        snprintf(err, n, "cannot map the shape's buffers: %s", strerror(errno));
        return HP_ST_NO_MEMORY;
    }
    memcpy(d, r->base + HP_CTL_BYTES, sizeof(*d));
    if (!desc_ok(r, d)) {
        snprintf(err, n, "the shape descriptor is inconsistent");
        rc = HP_ST_BAD_REQUEST;
    } else if ((rc = decode_shape(r, d)) == 0 && (rc = rn_target.shape(&r->shape, err, n)) == 0) {
        prefault(r);
        r->have_shape = 1;
    }
    free(d);
    return rc;
}

/* PREP: the request's device generation (only float32 inputs can be generated), then the
 * backend. */
static int prep(runner *r, int slot, char *err, size_t n)
{
    uint64_t marked = r->ctl->gen_tensors;
    for (int t = 0; t < HP_MAX_TENSORS && marked; t++)
        if ((marked >> t & 1) &&
            (t >= r->shape.n_in || r->shape.host_in[t].dtype != AKA_DT_FLOAT32)) {
            snprintf(err, n, "device generation asked for input %d, which is not a float32 input",
                     t);
            return HP_ST_BAD_REQUEST;
        }
    r->shape.gen_key = r->ctl->gen_key;
    r->shape.gen_tensors = marked;
    return rn_target.prep(&r->shape, slot, err, n);
}

static int handle(runner *r, int req, int slot, double *us, char *err, size_t n)
{
    int64_t device_free = 0;
    int rc;
    if (req == HP_REQ_SETUP) {
        int span = 0;
        rc = rn_target.setup(r->ctl->timing_ask, &span, &device_free, err, n);
        r->ctl->device_free = device_free;
        r->ctl->timing_span = span;
        if (rc == 0 && install_filter() != 0) {
            snprintf(err, n, "cannot install the runner's seccomp filter: %s", strerror(errno));
            rc = HP_ST_BAD_REQUEST;
        }
        r->confined = rc == 0;
        return rc;
    }
    if (!r->confined)
        return HP_ST_BAD_REQUEST;
    if (req == HP_REQ_SHAPE)
        return new_shape(r, err, n);
    if (!r->have_shape || slot < 0 || slot >= r->shape.slots)
        return HP_ST_BAD_REQUEST;
    if (req == HP_REQ_CALL)
        return rn_target.call(&r->shape, slot, us, err, n);
    if (req == HP_REQ_PREP && rn_target.prep)
        return prep(r, slot, err, n);
    if ((req == HP_REQ_FETCH || req == HP_REQ_FETCH_OUT) && rn_target.fetch)
        return rn_target.fetch(&r->shape, slot, req == HP_REQ_FETCH, err, n);
    return HP_ST_BAD_REQUEST;
}

static void serve(runner *r)
{
    for (uint32_t seq = 1;; seq++) {
        hp_ctl *ctl = r->ctl;
        char err[sizeof(ctl->error)] = "";
        double us = 0;
        /* Asleep between requests: the judge checks that this process uses no CPU there. */
        hp_wait_word(&ctl->arm, seq, 0);
        hp_signal(&ctl->ready, seq);
        hp_wait_word(&ctl->go, seq, hp_go_spin(ctl));
        int st = handle(r, ctl->req, ctl->slot, &us, err, sizeof(err));
        ctl = r->ctl; /* a SHAPE request may have remapped */
        ctl->status = st;
        ctl->reported_us = us;
        memcpy(ctl->error, err, sizeof(err));
        hp_signal(&ctl->done, seq);
    }
}

int main(void)
{
    runner r;
    struct stat st;
    /* Not ptrace-able, /proc/<pid>/mem and fd/ closed to other processes (the reference
     * runner holds the timed inputs the candidate must not see). */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    memset(&r, 0, sizeof(r));
    if (fstat(HP_FD, &st) != 0 || st.st_size < (off_t)HP_DATA_START) {
        fprintf(stderr, "aka-runner: started without the judge's shared memory\n");
        return 2;
    }
    r.bytes = (size_t)st.st_size;
    r.base = mmap(NULL, r.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, HP_FD, 0);
    if (r.base == MAP_FAILED) {
        fprintf(stderr, "aka-runner: cannot map the shared memory: %s\n", strerror(errno));
        return 2;
    }
    r.ctl = (hp_ctl *)r.base;
    if (r.ctl->magic != HP_MAGIC || r.ctl->version != HP_VERSION) {
        fprintf(stderr, "aka-runner: the shared memory is not the judge's\n");
        return 2;
    }
    serve(&r);
    return 0;
}
