/*
 * gpus.c — which GPUs of this host a multi-GPU job gets (a distributed operator: the
 * pinned world_size, DESIGN §4.3), and the environment that names them inside.
 *
 * A job of N >= 2 NVIDIA GPUs with no explicit ids takes the first N indices that
 * nvidia-smi lists; fewer than N is the machine's shortfall (code 75), said with both
 * numbers. Without a listing it keeps GPUs 0..N-1 (their device nodes are checked next). Inside,
 * CUDA_VISIBLE_DEVICES lists those physical indices and CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA
 * number them as nvidia-smi does. A single-GPU job keeps GPU 0 as before.
 */
#include "sandbox/internal.h"

#include "base/proc.h"

#include <stdlib.h>
#include <string.h>

int aka_gpu_pick(const char *smi_out, int n, int *ids, struct aka_err *err)
{
    int found = 0;
    for (const char *p = smi_out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 255 || (*end != '\n' && *end != '\0' && *end != ' '))
            continue; /* a blank or foreign line: not a GPU index */
        if (found < n)
            ids[found] = (int)v;
        found++;
    }
    if (found < n)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "environment: the job needs %d GPUs (the operator's pinned world_size); "
                           "this host shows %d (nvidia-smi --query-gpu=index)",
                           n, found);
    return 0;
}

/* nvidia-smi's index list. */
static int list_indices(struct strbuf *out, struct aka_err *err)
{
    const char *argv[] = {"nvidia-smi", "--query-gpu=index", "--format=csv,noheader", NULL};
    struct proc_spec spec;
    struct proc_result pr;
    memset(&spec, 0, sizeof(spec));
    spec.argv = argv;
    spec.out_mode = PROC_TO_BUFFER;
    spec.err_mode = PROC_NULL;
    spec.out_cap = (size_t)64 << 10;
    spec.timeout_ms = 30000;
    proc_result_init(&pr);
    int rc = proc_run(&spec, &pr, err);
    if (rc == 0 && pr.exit_code != 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "environment: nvidia-smi failed (exit %d)",
                         pr.exit_code);
    else if (rc < 0 && !proc_stop_signal())
        err->code = AKA_EXIT_ENV;
    if (rc == 0)
        strbuf_add(out, pr.out.buf, pr.out.len);
    proc_result_release(&pr);
    return rc;
}

int sbx_pick_local_gpus(const struct aka_sandbox_job *job, struct aka_sandbox_job *copy,
                        struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    *copy = *job;
    if (job->gpu_count < 2 || job->n_gpu_ids || job->gpu_vendor != AKA_VENDOR_NVIDIA)
        return 0;
    struct aka_err no_smi = AKA_ERR_INIT;
    if (list_indices(&out, &no_smi) < 0) {
        strbuf_release(&out);
        /* No listing (no nvidia-smi, or it failed): GPUs 0..N-1, whose device nodes the
         * transport checks next and names when one is missing. A stop signal still stops. */
        return proc_stop_signal() ? aka_err_set(err, no_smi.code, "%s", no_smi.msg) : 0;
    }
    int rc = aka_gpu_pick(out.buf, job->gpu_count, copy->gpu_ids, err);
    if (rc == 0)
        copy->n_gpu_ids = (size_t)job->gpu_count;
    strbuf_release(&out);
    return rc;
}

/* NAME=VALUE, replacing whatever the job set for NAME (aka's choice of GPUs wins). */
static void env_replace(struct strvec *env, const char *name, const char *value)
{
    size_t n = strlen(name), k = 0;
    for (size_t i = 0; i < env->n; i++) {
        if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
            free(env->v[i]);
        else
            env->v[k++] = env->v[i];
    }
    env->n = k;
    if (env->v)
        env->v[k] = NULL;
    strvec_pushf(env, "%s=%s", name, value);
}

void sbx_gpu_env(const int *ids, size_t n, struct strvec *env)
{
    struct strbuf list = STRBUF_INIT;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        strbuf_addf(&list, "%s%d", i ? "," : "", ids[i]);
    env_replace(env, "CUDA_VISIBLE_DEVICES", list.buf);
    env_replace(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    strbuf_release(&list);
}
