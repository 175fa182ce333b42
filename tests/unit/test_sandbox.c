/*
 * test_sandbox.c — unit tests of the sandbox module's boundary rules: safe
 * relative paths, never-shipped names, shipped-file checks (symlinks, special
 * files, roots, sizes, duplicates), runtime-bind checks, artifact collection
 * from a hostile job directory, the result's JSON, the bwrap argv, and the
 * refusal of a job when bwrap is missing.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[256];

static void put(const char *rel, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, scratch, rel);
    FILE *f = fopen(p.buf, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    strbuf_release(&p);
}

static const char *at(const char *rel)
{
    /* A ring of buffers: a test may hold a few dozen of these at once. */
    static char buf[64][512];
    static int next;
    char *b = buf[next++ % 64];
    snprintf(b, 512, "%s/%s", scratch, rel);
    return b;
}

static int setup_scratch(void **state)
{
    (void)state;
    snprintf(scratch, sizeof(scratch), "/tmp/aka-test-sandbox.XXXXXX");
    assert_non_null(mkdtemp(scratch));
    return 0;
}

static int teardown_scratch(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    aka_remove_tree(scratch, &err);
    return 0;
}

static void t_rel_paths(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    const char *good[] = {"a", "a/b.txt", "dir/sub/x.py", ".hidden", "a..b", NULL};
    const char *bad[] = {"",     "/abs", "..",   "a/../b", "a/./b", "./a",
                         "a//b", "a/",   "a\nb", "x/..",   NULL};
    (void)state;
    for (const char **g = good; *g; g++)
        assert_int_equal(aka_sandbox_check_rel(*g, "p", &err), 0);
    for (const char **b = bad; *b; b++) {
        assert_int_equal(aka_sandbox_check_rel(*b, "p", &err), -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
    }
}

static void t_never_shipped(void **state)
{
    const char *never[] = {".git/config",
                           "sub/.git/HEAD",
                           ".aka/state.json",
                           "memory/v1.json",
                           "x/.claude/s.json",
                           ".agents/skills/a",
                           ".env",
                           ".env.local",
                           "id_rsa",
                           "keys/server.pem",
                           "notes.md",
                           "a.pyc",
                           "p.ncu-rep",
                           "evaluations.jsonl",
                           ".ssh/config",
                           "skills/x.py",
                           NULL};
    const char *ok[] = {"kernel.py",  "harness/run.py", "shapes.json", "memory.py",
                        "mymemory/x", "reference.py",   "README",      NULL};
    (void)state;
    for (const char **n = never; *n; n++)
        assert_non_null(aka_sandbox_never_shipped(*n, false));
    for (const char **o = ok; *o; o++)
        assert_null(aka_sandbox_never_shipped(*o, false));
    assert_non_null(aka_sandbox_never_shipped("shapes.json", true));
    assert_non_null(aka_sandbox_never_shipped("sub/metadata.json", true));
    assert_non_null(aka_sandbox_never_shipped("roofline.json", true));
    assert_null(aka_sandbox_never_shipped("kernel.py", true));
    assert_non_null(aka_sandbox_secret_path("/root/.ssh/id_ed25519"));
    assert_non_null(aka_sandbox_secret_path("/home/u/.aws/credentials"));
    assert_null(aka_sandbox_secret_path("/work/op/kernel.py"));
}

static void t_binds(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strvec deny = STRVEC_INIT;
    const char *refused[] = {"/",
                             "/usr",
                             "/etc/foo",
                             "/root/env",
                             "/home/u",
                             "/home/u/src",
                             "/home/u/.ssh/venv",
                             "/proc/1",
                             "/var/lib/x",
                             "/opt",
                             "/data/ws/sub",
                             "/data",
                             "/tmp",
                             "/dev/shm",
                             NULL};
    const char *allowed[] = {"/opt/conda",
                             "/home/u/.venv",
                             "/home/u/miniconda3/envs/torch",
                             "/home/u/.pyenv/versions/3.11.7",
                             "/data/tools",
                             NULL};
    (void)state;
    setenv("HOME", "/home/u", 1);
    strvec_push(&deny, "/data/ws");
    for (const char **r = refused; *r; r++) {
        assert_int_equal(aka_sandbox_check_bind(*r, "/opt/x", &deny, &err), -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
    }
    for (const char **a = allowed; *a; a++)
        assert_int_equal(aka_sandbox_check_bind(*a, *a, &deny, &err), 0);
    /* targets the sandbox owns */
    const char *dests[] = {"/", "/usr/x", "/etc", "/tmp/x", "/proc", "/opt/../etc", NULL};
    for (const char **d = dests; *d; d++)
        assert_int_equal(aka_sandbox_check_bind("/opt/conda", *d, &deny, &err), -1);
    /* a directory that contains $HOME */
    assert_int_equal(aka_sandbox_check_bind("/data", "/x", NULL, &err), 0);
    setenv("HOME", "/data/me", 1);
    assert_int_equal(aka_sandbox_check_bind("/data", "/x", NULL, &err), -1);
    strvec_clear(&deny);
}

static void make_tree(void)
{
    assert_int_equal(mkdir(at("root"), 0755), 0);
    assert_int_equal(mkdir(at("root/sub"), 0755), 0);
    assert_int_equal(mkdir(at("outside"), 0755), 0);
    put("root/kernel.py", "k");
    put("root/sub/ok.py", "ok");
    put("root/.env", "SECRET=1");
    put("root/notes.md", "n");
    put("root/shapes.json", "{}");
    put("root/big.bin", "0123456789abcdef");
    put("outside/secret.txt", "s");
    assert_int_equal(symlink(at("outside/secret.txt"), at("root/link")), 0);
    assert_int_equal(symlink(at("outside"), at("root/dirlink")), 0);
    assert_int_equal(mkfifo(at("root/fifo"), 0600), 0);
}

static void t_add_file(void **state)
{
    struct aka_sandbox_job job;
    struct aka_err err = AKA_ERR_INIT;
    const char *root;
    (void)state;
    make_tree();
    root = at("root");
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    job.max_input_bytes = 8;
    assert_int_equal(
        aka_sandbox_job_add_file(&job, at("root/kernel.py"), root, "kernel.py", false, false, &err),
        0);
    struct {
        const char *src, *dest;
        bool trusted;
    } bad[] = {
        {at("root/link"), "x", false},               /* symlink */
        {at("root/dirlink/secret.txt"), "y", false}, /* resolves outside the root */
        {at("root/../outside/secret.txt"), "z", false},
        {at("root/fifo"), "f", false},              /* not a regular file */
        {at("root/big.bin"), "b", false},           /* over the size limit */
        {at("root/sub/ok.py"), "kernel.py", false}, /* duplicate destination */
        {at("root/.env"), "env", false},            /* never shipped by name */
        {at("root/sub/ok.py"), "../x", false},      /* unsafe destination */
        {at("root/sub/ok.py"), ".git/hooks/x", false},
        {at("root/notes.md"), "notes.md", false},
        {at("root/missing"), "m", false},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        aka_err_clear(&err);
        assert_int_equal(aka_sandbox_job_add_file(&job, bad[i].src, root, bad[i].dest, false,
                                                  bad[i].trusted, &err),
                         -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
    }
    /* supervisor-owned files are exempt from the name rules only */
    assert_int_equal(
        aka_sandbox_job_add_file(&job, at("root/notes.md"), root, "harness/n.md", true, true, &err),
        0);
    assert_int_equal(aka_sandbox_job_add_file(&job, at("root/link"), root, "l", false, true, &err),
                     -1);
    job.generalized = true;
    assert_int_equal(aka_sandbox_job_add_file(&job, at("root/shapes.json"), root, "shapes.json",
                                              false, false, &err),
                     -1);
    assert_int_equal(aka_sandbox_job_add_file(&job, at("root/shapes.json"), root, "shapes.json",
                                              true, true, &err),
                     0);
    assert_int_equal(job.files.n, 3);
    aka_sandbox_job_release(&job);
}

static void t_add_tree(void **state)
{
    struct aka_sandbox_job job;
    struct aka_err err = AKA_ERR_INIT;
    struct strvec skipped = STRVEC_INIT;
    (void)state;
    assert_int_equal(mkdir(at("ws"), 0755), 0);
    assert_int_equal(mkdir(at("ws/.git"), 0755), 0);
    assert_int_equal(mkdir(at("ws/memory"), 0755), 0);
    assert_int_equal(mkdir(at("ws/harness"), 0755), 0);
    put("ws/kernel.py", "k");
    put("ws/.git/config", "c");
    put("ws/memory/v1.json", "{}");
    put("ws/harness/run.py", "r");
    put("ws/id_ed25519", "key");
    put("ws/x.pyc", "b");
    assert_int_equal(symlink("/etc/passwd", at("ws/passwd")), 0);
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    assert_int_equal(aka_sandbox_job_add_tree(&job, at("ws"), "in", false, &skipped, &err), 0);
    assert_int_equal(job.files.n, 2);
    assert_string_equal(job.files.v[0].dest, "in/harness/run.py");
    assert_string_equal(job.files.v[1].dest, "in/kernel.py");
    assert_int_equal(skipped.n, 5); /* .git, memory, id_ed25519, passwd link, x.pyc */
    assert_int_equal(aka_sandbox_job_add_tree(&job, at("ws/memory"), ".", false, NULL, &err), -1);
    strvec_clear(&skipped);
    aka_sandbox_job_release(&job);
}

static void t_builders_and_validate(void **state)
{
    struct aka_sandbox_job job;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "out/prof.json", &err), 0);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "../x", &err), -1);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "/abs", &err), -1);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "memory/v1.json", &err), -1);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, ".aka/state.json", &err), -1);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "sub/.git/config", &err), -1);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "out/.env", &err), -1);
    /* raw profiles and notes may come back (they may not be shipped in) */
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "prof/report.ncu-rep", &err), 0);
    assert_int_equal(aka_sandbox_job_add_artifact(&job, "summary.md", &err), 0);
    assert_int_equal(aka_sandbox_job_add_env(&job, "A_1=x=y", &err), 0);
    assert_int_equal(aka_sandbox_job_add_env(&job, "1A=x", &err), -1);
    assert_int_equal(aka_sandbox_job_add_env(&job, "=x", &err), -1);
    assert_int_equal(aka_sandbox_job_add_env(&job, "NOEQ", &err), -1);
    assert_int_equal(aka_sandbox_job_add_bind(&job, "relative", &err), -1);
    assert_int_equal(aka_sandbox_job_add_bind(&job, "/nonexistent-aka-bind", &err), -1);
    assert_int_equal(aka_sandbox_job_add_bind(&job, "/etc", &err), -1);
    assert_int_equal(aka_sandbox_job_validate(&job, &err), -1); /* no command */
    strvec_push(&job.argv, "true");
    assert_int_equal(aka_sandbox_job_validate(&job, &err), -1); /* artifacts, no dir */
    job.artifact_dir = aka_xstrdup(at("art"));
    assert_int_equal(aka_sandbox_job_validate(&job, &err), 0);
    job.timeout_s = 0;
    assert_int_equal(aka_sandbox_job_validate(&job, &err), -1);
    job.timeout_s = 10;
    job.gpu_count = 2;
    job.n_gpu_ids = 2;
    job.gpu_ids[0] = job.gpu_ids[1] = 1;
    assert_int_equal(aka_sandbox_job_validate(&job, &err), -1);
    job.gpu_ids[1] = 3;
    assert_int_equal(aka_sandbox_job_validate(&job, &err), 0);
    aka_sandbox_job_release(&job);
}

static bool has(const struct strvec *sv, const char *prefix)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strncmp(sv->v[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

static void hostile_jobdir(void)
{
    assert_int_equal(mkdir(at("job"), 0755), 0);
    assert_int_equal(mkdir(at("job/d"), 0755), 0);
    assert_int_equal(mkdir(at("art"), 0755), 0);
    put("job/good.txt", "good");
    put("job/d/ok.txt", "ok");
    put("job/huge.bin", "0123456789abcdef0123456789");
    assert_int_equal(symlink("/etc/passwd", at("job/link")), 0);
    assert_int_equal(symlink("/etc/passwd", at("job/d/link")), 0);
    assert_int_equal(symlink("/", at("job/dirlink")), 0);
    assert_int_equal(mkfifo(at("job/fifo"), 0600), 0);
    put("victim", "victim");
    assert_int_equal(symlink(at("victim"), at("art/good.txt")), 0);
}

static void t_artifacts(void **state)
{
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    struct strbuf text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const char *paths[] = {"good.txt", "link", "dirlink/etc/passwd", "d", "missing", "huge.bin",
                           "fifo",     NULL};
    (void)state;
    hostile_jobdir();
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    job.max_artifact_bytes = 16;
    job.artifact_dir = aka_xstrdup(at("art"));
    strvec_pushv(&job.artifacts, paths);
    aka_sandbox_result_init(&res);
    sbx_collect_artifacts(&job, at("job"), &res);
    assert_int_equal(res.artifacts.n, 2);
    assert_string_equal(res.artifacts.v[0], "good.txt");
    assert_string_equal(res.artifacts.v[1], "d/ok.txt");
    assert_true(has(&res.artifacts_refused, "link: "));
    assert_true(has(&res.artifacts_refused, "dirlink/etc/passwd: "));
    assert_true(has(&res.artifacts_refused, "d/link: "));
    assert_true(has(&res.artifacts_refused, "missing: "));
    assert_true(has(&res.artifacts_refused, "huge.bin: "));
    assert_true(has(&res.artifacts_refused, "fifo: "));
    /* the planted destination symlink was replaced, its target untouched */
    assert_int_equal(aka_read_file(at("victim"), &text, 100, &err), 0);
    assert_string_equal(text.buf, "victim");
    struct stat st;
    assert_int_equal(lstat(at("art/good.txt"), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_false(aka_exists(at("art/link")));
    assert_false(aka_exists(at("art/d/link")));
    strbuf_release(&text);
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
}

static void t_open_beneath(void **state)
{
    int dirfd = open(scratch, O_RDONLY | O_DIRECTORY);
    (void)state;
    int fd = sbx_open_beneath(dirfd, "job/good.txt", O_RDONLY, 0);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sbx_open_beneath(dirfd, "job/link", O_RDONLY, 0), -1);
    assert_int_equal(sbx_open_beneath(dirfd, "job/dirlink/etc/passwd", O_RDONLY, 0), -1);
    close(dirfd);
}

static void t_result_json(void **state)
{
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    (void)state;
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    strvec_push(&job.argv, "x");
    aka_sandbox_result_init(&res);
    snprintf(res.isolation, sizeof(res.isolation), "none");
    strbuf_add(&res.out, "ok\xff\xc3(\xed\xa0\x80", 8); /* invalid UTF-8 sequences */
    json_t *doc = aka_sandbox_result_to_json(&job, &res);
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"isolation\":\"none\""));
    json_t *back = json_loads(text, 0, NULL);
    assert_non_null(back); /* always valid JSON */
    const char *out = json_string_value(json_object_get(back, "stdout"));
    assert_int_equal(strncmp(out, "ok\xEF\xBF\xBD", 5), 0);
    free(text);
    json_decref(back);
    json_decref(doc);
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
}

static long find(const struct strvec *sv, const char *a, const char *b)
{
    for (size_t i = 0; i + 1 < sv->n; i++)
        if (strcmp(sv->v[i], a) == 0 && (!b || strcmp(sv->v[i + 1], b) == 0))
            return (long)i;
    return -1;
}

static void t_bwrap_argv(void **state)
{
    struct aka_sandbox_job job;
    struct strvec argv = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    job.detect_python = false;
    assert_int_equal(
        aka_sandbox_job_add_file(&job, at("root/kernel.py"), at("root"), "k.py", true, false, &err),
        0);
    strvec_push(&job.argv, "python3");
    strvec_push(&job.argv, "k.py");
    assert_int_equal(aka_sandbox_bwrap_argv(&job, "bwrap", "/J", "/C", &argv, NULL, &err), 0);
    assert_true(find(&argv, "--unshare-all", NULL) > 0);
    assert_true(find(&argv, "--die-with-parent", NULL) > 0);
    assert_true(find(&argv, "--new-session", NULL) > 0);
    assert_true(find(&argv, "--cap-drop", "ALL") > 0);
    assert_true(find(&argv, "--ro-bind", "/usr") > 0);
    assert_true(find(&argv, "--bind", "/J") > 0);
    assert_true(find(&argv, "--ro-bind", "/J/k.py") > find(&argv, "--bind", "/J"));
    assert_true(find(&argv, "--ro-bind", "/C/passwd") > 0);
    assert_int_equal(find(&argv, "--bind", "/"), -1);
    for (size_t i = 0; i < argv.n; i++)
        assert_null(strstr(argv.v[i], "/dev/nvidia"));
    assert_string_equal(argv.v[argv.n - 3], "--");
    assert_string_equal(argv.v[argv.n - 1], "k.py");
    strvec_clear(&argv);
    aka_sandbox_job_release(&job);
}

/* A job inside the agent sandbox runs as the supervisor's uid: the id its own user namespace
 * maps it to outside (/proc/self/uid_map), as a one-level job would. */
static void t_nested_uid(void **state)
{
    (void)state;
    assert_int_equal(sbx_outer_id("      1000          0          1\n", 1000), 0); /* root's view */
    assert_int_equal(sbx_outer_id("1000 0 1\n", 0), -1);                           /* unmapped */
    assert_int_equal(sbx_outer_id("0 0 4294967295\n", 1234), 1234);                /* the host */
    assert_int_equal(sbx_outer_id("0 100000 65536\n1000 1000 1\n", 1000), 101000);
    assert_int_equal(sbx_outer_id("", 5), -1);
    /* Not nested, or mapped to itself (this test's own namespace): the caller's uid stays. */
    assert_int_equal(sbx_nested_uid(false), -1);
    struct strbuf map = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_read_file("/proc/self/uid_map", &map, 1 << 16, &err), 0);
    long outside = sbx_outer_id(map.buf, (long)geteuid());
    assert_int_equal(sbx_nested_uid(true), outside == (long)geteuid() ? -1 : outside);
    strbuf_release(&map);
}

static void t_missing_bwrap(void **state)
{
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    struct aka_sandbox_transport t;
    struct aka_sandbox_local_opts opts = {.tmp_dir = scratch, .bwrap = "/nonexistent/bwrap"};
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    aka_sandbox_local(&t, &opts);
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    strvec_push(&job.argv, "true");
    aka_sandbox_result_init(&res);
    assert_int_equal(aka_sandbox_run(&t, &job, &res, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_int_equal(res.status, AKA_SBX_ENV_FAILED);
    assert_non_null(strstr(res.error, "bwrap"));
    aka_sandbox_result_release(&res);
    /* the explicit opt-out runs, and says so */
    job.isolation = AKA_SBX_NONE;
    aka_sandbox_result_init(&res);
    assert_int_equal(aka_sandbox_run(&t, &job, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.isolation, "none");
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
}

int main(void)
{
    /* Order matters: later tests reuse the trees earlier ones built in scratch. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_rel_paths),   cmocka_unit_test(t_never_shipped),
        cmocka_unit_test(t_binds),       cmocka_unit_test(t_add_file),
        cmocka_unit_test(t_add_tree),    cmocka_unit_test(t_builders_and_validate),
        cmocka_unit_test(t_artifacts),   cmocka_unit_test(t_open_beneath),
        cmocka_unit_test(t_result_json), cmocka_unit_test(t_bwrap_argv),
        cmocka_unit_test(t_nested_uid),  cmocka_unit_test(t_missing_bwrap),
    };
    return cmocka_run_group_tests(tests, setup_scratch, teardown_scratch);
}
