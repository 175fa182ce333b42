/*
 * test_gpus.c — a job of N >= 2 GPUs (a distributed operator's pinned world_size) on the
 * local transport, with a fake nvidia-smi first on PATH (never a real one) and a fake
 * /dev: it gets the first N indices nvidia-smi lists, its environment names them
 * (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER=PCI_BUS_ID), and a host that shows fewer than
 * N is the machine's failure (75) naming both numbers. The parser of nvidia-smi's list
 * alone too.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_at(const char *rel, const char *text, mode_t mode)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, aka_scratch_dir(), rel);
    unlink(path.buf); /* rewritten between cases */
    assert_int_equal(aka_write_file_plain(path.buf, text, strlen(text), mode, &err), 0);
    strbuf_release(&path);
}

static void mkdir_at(const char *rel)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, aka_scratch_dir(), rel);
    assert_int_equal(aka_mkdir_p(path.buf, 0755, &err), 0);
    strbuf_release(&path);
}

/* A fake nvidia-smi that lists these indices, first on PATH. */
static void fake_smi(const char *indices)
{
    static char path[4096];
    char script[256];
    snprintf(script, sizeof(script), "#!/bin/sh\nprintf '%s'\n", indices);
    write_at("bin/nvidia-smi", script, 0755);
    snprintf(path, sizeof(path), "%s/bin:%s", aka_scratch_dir(), getenv("PATH"));
    setenv("PATH", path, 1);
}

static void test_pick(void **state)
{
    (void)state;
    int ids[4] = {0};
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_gpu_pick("0\n1\n2\n3\n", 2, ids, &err), 0);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 1);
    assert_int_equal(aka_gpu_pick("No devices were found\n5\n7", 2, ids, &err), 0);
    assert_int_equal(ids[0], 5);
    assert_int_equal(ids[1], 7);
    assert_int_equal(aka_gpu_pick("0\n", 2, ids, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "needs 2 GPUs"));
    assert_non_null(strstr(err.msg, "shows 1"));
}

/* A local job of `gpus` GPUs (isolation none: this host may lack bwrap) against the fake /dev. */
static int run_job(int gpus, struct aka_sandbox_result *res, struct aka_err *err)
{
    struct aka_sandbox_transport t;
    struct aka_sandbox_job job;
    struct strbuf dev = STRBUF_INIT;
    aka_path_join(&dev, aka_scratch_dir(), "dev");
    aka_sandbox_local(&t, NULL);
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    job.isolation = AKA_SBX_NONE;
    job.gpu_count = gpus;
    job.dev_root = dev.buf;
    strvec_pushv(&job.argv,
                 (const char *const[]){"sh", "-c",
                                       "echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\"", NULL});
    aka_sandbox_result_init(res);
    int rc = aka_sandbox_run(&t, &job, res, err);
    aka_sandbox_job_release(&job);
    strbuf_release(&dev);
    return rc;
}

static void test_local_world_size(void **state)
{
    (void)state;
    struct aka_sandbox_result res;
    struct aka_err err = AKA_ERR_INIT;
    mkdir_at("bin");
    mkdir_at("dev");
    const char *nodes[] = {"dev/nvidiactl", "dev/nvidia2", "dev/nvidia3", NULL};
    for (const char **n = nodes; *n; n++)
        write_at(*n, "", 0644);

    fake_smi("2\\n3\\n");
    assert_int_equal(run_job(2, &res, &err), 0);
    assert_string_equal(res.out.buf, "2,3 PCI_BUS_ID\n");
    aka_sandbox_result_release(&res);

    /* One GPU visible, world_size 2: the machine's shortfall, said plainly. */
    fake_smi("2\\n");
    aka_err_clear(&err);
    assert_int_equal(run_job(2, &res, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_int_equal(res.status, AKA_SBX_ENV_FAILED);
    assert_non_null(strstr(res.error, "needs 2 GPUs"));
    assert_non_null(strstr(res.error, "shows 1"));
    aka_sandbox_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_local_world_size),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
