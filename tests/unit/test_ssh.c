/*
 * test_ssh.c — the ssh transport's pure pieces (sandbox.h, ssh_remote.c), without ssh:
 * the probe script run here against a fake /dev and a fake nvidia-smi, its parsing (MIG,
 * missing tools, runtime binds after realpath), the remote bwrap command line (one GPU's
 * nodes, its UUID, no network) and the shell quoting that carries it.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <string.h>

static void write_exec(const char *rel, const char *text)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, aka_scratch_dir(), rel);
    assert_int_equal(aka_write_file_plain(path.buf, text, strlen(text), 0755, &err), 0);
    strbuf_release(&path);
}

static void mkdir_scratch(const char *rel)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, aka_scratch_dir(), rel);
    assert_int_equal(aka_mkdir_p(path.buf, 0755, &err), 0);
    strbuf_release(&path);
}

/* Run argv through sh with PATH=<scratch>/bin first; stdout into out. */
static int run_here(const struct strvec *argv, struct strbuf *out)
{
    struct proc_spec spec;
    struct proc_result pr;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf path = STRBUF_INIT;
    strbuf_addf(&path, "PATH=%s/bin:/usr/bin:/bin", aka_scratch_dir());
    const char *env[] = {path.buf, NULL};
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)argv->v;
    spec.env = env;
    spec.out_mode = PROC_TO_BUFFER;
    spec.err_mode = PROC_INHERIT;
    proc_result_init(&pr);
    assert_int_equal(proc_run(&spec, &pr, &err), 0);
    strbuf_add(out, pr.out.buf, pr.out.len);
    int code = pr.exit_code;
    proc_result_release(&pr);
    strbuf_release(&path);
    return code;
}

static void test_quoting(void **state)
{
    (void)state;
    const char *words[] = {"a b", "it's", "", "$HOME;rm -rf /", "plain/x=1", "new\nline"};
    struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
    struct strvec argv = STRVEC_INIT;
    strbuf_addstr(&cmd, "printf '<%s>' ");
    aka_shell_join(words, 6, &cmd);
    strvec_pushv(&argv, (const char *const[]){"/bin/sh", "-c", cmd.buf, NULL});
    assert_int_equal(run_here(&argv, &out), 0);
    assert_string_equal(out.buf, "<a b><it's><><$HOME;rm -rf /><plain/x=1><new\nline>");
    strbuf_release(&cmd);
    strbuf_release(&out);
    strvec_clear(&argv);
}

/* A remote host faked in the scratch dir: a /dev of fake nodes, an nvidia-smi (first on
 * PATH) that answers for GPUs 2 and 3 only, a remote temp dir; the probe run against it
 * for g and parsed into r; a job of g.n GPUs from index g.first and its argv in all. */
struct fake_remote {
    struct strbuf dev, tmp, out, all;
    struct strvec argv, job_argv;
    struct aka_ssh_remote r;
    struct aka_sandbox_job job;
    struct aka_sandbox_ssh_opts o;
    struct aka_err err;
};

static void fake_remote_dirs(const char *const *nodes, struct fake_remote *f)
{
    struct strbuf rel = STRBUF_INIT;
    static const char *const dirs[] = {"fdev", "bin", "rtmp"};
    for (size_t i = 0; i < 3; i++) { /* fresh for each test */
        aka_path_join(&rel, aka_scratch_dir(), dirs[i]);
        assert_int_equal(aka_remove_tree(rel.buf, &f->err), 0);
        mkdir_scratch(dirs[i]);
    }
    for (size_t i = 0; nodes[i]; i++) {
        strbuf_reset(&rel);
        strbuf_addf(&rel, "fdev/%s", nodes[i]);
        write_exec(rel.buf, "");
    }
    write_exec("bin/nvidia-smi", "#!/bin/sh\ncase \"$*\" in\n"
                                 "*'-i 2 '*) echo 'GPU-0a1b2c3d-1111-2222-3333-444455556666, "
                                 "Disabled';;\n"
                                 "*'-i 3 '*) echo 'GPU-0a1b2c3d-1111-2222-3333-777788889999, "
                                 "Disabled';;\n"
                                 "*) exit 6;; esac\n");
    aka_path_join(&f->dev, aka_scratch_dir(), "fdev");
    aka_path_join(&f->tmp, aka_scratch_dir(), "rtmp");
    strbuf_release(&rel);
}

static void fake_remote_start(const char *const *nodes, struct aka_ssh_gpus g,
                              struct fake_remote *f)
{
    memset(f, 0, sizeof(*f));
    strbuf_init(&f->dev, 0);
    strbuf_init(&f->tmp, 0);
    strbuf_init(&f->out, 0);
    strbuf_init(&f->all, 0);
    fake_remote_dirs(nodes, f);
    aka_ssh_probe_argv(g, f->dev.buf, f->tmp.buf, NULL, &f->argv);
    assert_int_equal(run_here(&f->argv, &f->out), 0);
    aka_ssh_remote_init(&f->r);
    assert_int_equal(aka_ssh_probe_parse(f->out.buf, g, NULL, &f->r, &f->err), 0);
    f->o = (struct aka_sandbox_ssh_opts){.target = "u@h", .gpu = g.first};
    aka_sandbox_job_init(&f->job, AKA_SBX_RUN);
    f->job.gpu_count = g.n;
    strvec_push(&f->job.argv, "true");
}

/* The job's remote argv, one word a line in f->all; aka_ssh_job_argv's status. */
static int fake_remote_argv(struct fake_remote *f)
{
    strvec_clear(&f->job_argv);
    strbuf_reset(&f->all);
    int rc = aka_ssh_job_argv(&f->job, &f->o, &f->r, &f->job_argv, &f->err);
    for (size_t i = 0; i < f->job_argv.n; i++)
        strbuf_addf(&f->all, "%s\n", f->job_argv.v[i]);
    return rc;
}

static void fake_remote_release(struct fake_remote *f)
{
    aka_remove_tree(f->r.dir.buf, &f->err);
    aka_sandbox_job_release(&f->job);
    aka_ssh_remote_release(&f->r);
    strvec_clear(&f->argv);
    strvec_clear(&f->job_argv);
    strbuf_release(&f->all);
    strbuf_release(&f->dev);
    strbuf_release(&f->tmp);
    strbuf_release(&f->out);
}

/* A remote /dev with four GPUs; the job is given GPU 2 and sees nothing of the others. */
static void test_probe_and_argv_fake_dev(void **state)
{
    (void)state;
    static const char *const nodes[] = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia0",
                                        "nvidia1",   "nvidia2",    "nvidia3",          NULL};
    struct fake_remote f;
    fake_remote_start(nodes, (struct aka_ssh_gpus){2, 1}, &f);
    assert_non_null(strstr(f.r.dir.buf, "/rtmp/aka-ssh."));
    assert_true(aka_is_dir(f.r.dir.buf));
    assert_int_equal(f.r.gpu_uuids.n, 1);
    assert_string_equal(f.r.gpu_uuids.v[0], "GPU-0a1b2c3d-1111-2222-3333-444455556666");
    assert_int_equal(f.r.dev_nodes.n, 7);

    assert_int_equal(fake_remote_argv(&f), 0);
    static const char *const has[] = {
        "--dev-bind\n/dev/nvidia2\n/dev/nvidia2\n",
        "--dev-bind\n/dev/nvidiactl\n/dev/nvidiactl\n",
        "--dev-bind\n/dev/nvidia-uvm\n/dev/nvidia-uvm\n",
        "--dev-bind\n/dev/nvidia-uvm-tools\n",
        "CUDA_VISIBLE_DEVICES=GPU-0a1b2c3d-1111-2222-3333-444455556666\n",
        "env\n-i\n",
        "--unshare-all\n",
        "--ro-bind\n/usr\n/usr\n",
        "--remount-ro\n/\n",
        NULL};
    static const char *const hasnt[] = {"nvidia0", "nvidia1", "nvidia3", "--share-net", NULL};
    for (size_t i = 0; has[i]; i++)
        assert_non_null(strstr(f.all.buf, has[i]));
    for (size_t i = 0; hasnt[i]; i++)
        assert_null(strstr(f.all.buf, hasnt[i]));

    /* The same GPU without its own node on the host: the environment's (75). */
    strvec_clear(&f.r.dev_nodes);
    strvec_pushv(&f.r.dev_nodes, (const char *const[]){"nvidiactl", "nvidia0", NULL});
    assert_int_equal(fake_remote_argv(&f), -1);
    assert_int_equal(f.err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(f.err.msg, "/dev/nvidia"));

    /* More GPUs than the indices left above --sandbox-ssh-gpu: refused, code 2. */
    f.job.gpu_count = AKA_SBX_MAX_GPUS - 1;
    assert_int_equal(fake_remote_argv(&f), -1);
    assert_int_equal(f.err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(f.err.msg, "the highest index is 31"));
    fake_remote_release(&f);
}

/* A job of two GPUs from --sandbox-ssh-gpu 2 (a world_size 2 operator): GPUs 2 and 3, both
 * by node and UUID, nothing of 0 and 1; without GPU 3's node it is the environment's (75). */
static void test_two_gpus_fake_dev(void **state)
{
    (void)state;
    static const char *const nodes[] = {"nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1",
                                        "nvidia2",   "nvidia3",    NULL};
    struct fake_remote f;
    fake_remote_start(nodes, (struct aka_ssh_gpus){2, 2}, &f);
    assert_int_equal(f.r.gpu_uuids.n, 2);
    assert_int_equal(fake_remote_argv(&f), 0);
    assert_non_null(strstr(f.all.buf, "--dev-bind\n/dev/nvidia2\n/dev/nvidia2\n"));
    assert_non_null(strstr(f.all.buf, "--dev-bind\n/dev/nvidia3\n/dev/nvidia3\n"));
    assert_null(strstr(f.all.buf, "nvidia0"));
    assert_null(strstr(f.all.buf, "nvidia1"));
    assert_non_null(strstr(f.all.buf, "CUDA_VISIBLE_DEVICES=GPU-0a1b2c3d-1111-2222-3333-"
                                      "444455556666,GPU-0a1b2c3d-1111-2222-3333-777788889999\n"));

    /* The asked GPU 4 does not answer: the probe says so, nothing else is assumed. */
    strvec_clear(&f.argv);
    strbuf_reset(&f.out);
    aka_ssh_probe_argv((struct aka_ssh_gpus){3, 2}, f.dev.buf, f.tmp.buf, NULL, &f.argv);
    assert_int_equal(run_here(&f.argv, &f.out), 0);
    assert_non_null(strstr(f.out.buf, "gpufail 4 "));

    strvec_clear(&f.r.dev_nodes);
    strvec_pushv(&f.r.dev_nodes, (const char *const[]){"nvidiactl", "nvidia-uvm", "nvidia2", NULL});
    assert_int_equal(fake_remote_argv(&f), -1);
    assert_int_equal(f.err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(f.err.msg, "no /dev/nvidia3 (GPUs 2..3)"));
    fake_remote_release(&f);
}

/* gpus: how many GPUs from index 0 the job asked about (0: none). */
static int parse_text(const char *text, int gpus, const struct strvec *specs, struct aka_err *err)
{
    struct aka_ssh_remote r;
    aka_ssh_remote_init(&r);
    aka_err_clear(err);
    int rc = aka_ssh_probe_parse(text, (struct aka_ssh_gpus){0, gpus}, specs, &r, err);
    aka_ssh_remote_release(&r);
    return rc;
}

static void test_parse_refusals(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    const char *head = "dir /t/aka-ssh.x\nid 1000 1000\nhome /h/u\n";
    struct strbuf text = STRBUF_INIT;
    strbuf_addf(&text, "%sgpu 0 GPU-ab12, Enabled\n", head);
    assert_int_equal(parse_text(text.buf, 1, NULL, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "MIG enabled"));
    strbuf_reset(&text);
    strbuf_addf(&text, "%sgpu 0 GPU-ab12, [N/A]\n", head);
    assert_int_equal(parse_text(text.buf, 1, NULL, &err), 0);
    strbuf_reset(&text);
    strbuf_addf(&text, "%sgpu 0 MIG-ab12, Disabled\n", head);
    assert_int_equal(parse_text(text.buf, 1, NULL, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    strbuf_reset(&text);
    strbuf_addf(&text, "missing bwrap\n%s", head);
    assert_int_equal(parse_text(text.buf, 0, NULL, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "lacks bwrap"));

    /* Runtime binds after the remote realpath: into ~/.ssh, the home, a system tree. */
    struct strvec specs = STRVEC_INIT;
    strvec_push(&specs, "/data/link=/opt/d");
    static const char *const bad[] = {"bind /h/u/.ssh\n", "bind /h/u\n", "bind /etc\n",
                                      "bind /\n",         "nobind -\n",  NULL};
    for (size_t i = 0; bad[i]; i++) {
        strbuf_reset(&text);
        strbuf_addf(&text, "%s%s", head, bad[i]);
        assert_int_equal(parse_text(text.buf, 0, &specs, &err), -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
    }
    strbuf_reset(&text);
    strbuf_addf(&text, "%sbind /data/real\n", head);
    assert_int_equal(parse_text(text.buf, 0, &specs, &err), 0);
    strvec_clear(&specs);
    strbuf_release(&text);
}

/* A job of two GPUs: each answer must be the next index asked about, every one answered. */
static void test_parse_two_gpus(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    static const struct {
        const char *answer;
        int rc;
        const char *says;
    } cases[] = {
        {"gpu 0 GPU-aa, Disabled\ngpu 1 GPU-bb, Disabled\n", 0, NULL},
        {"gpu 0 GPU-aa, Disabled\n", -1, "said nothing about GPU 1"},
        {"gpu 1 GPU-bb, Disabled\ngpu 0 GPU-aa, Disabled\n", -1, "unexpected GPU line"},
        {"gpu 0 GPU-aa, Disabled\ngpu 0 GPU-aa, Disabled\n", -1, "unexpected GPU line"},
        {"gpu 0 GPU-aa, Disabled\ngpu 1 GPU-bb, Enabled\n", -1, "remote GPU 1 has MIG enabled"},
        {"gpu 0 GPU-aa, Disabled\ngpufail 1 No devices were found\n", -1,
         "cannot query GPU 1 No devices"},
        {"gpu 0 GPU-aa, Disabled\ngpu 1 GPU-bb, Disabled\ngpu 2 GPU-cc, Disabled\n", -1,
         "unexpected GPU line"},
    };
    struct strbuf text = STRBUF_INIT;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        strbuf_reset(&text);
        strbuf_addf(&text, "dir /t/aka-ssh.x\nid 1000 1000\nhome /h/u\n%s", cases[i].answer);
        assert_int_equal(parse_text(text.buf, 2, NULL, &err), cases[i].rc);
        if (cases[i].says) {
            assert_int_equal(err.code, AKA_EXIT_ENV);
            assert_non_null(strstr(err.msg, cases[i].says));
        }
    }
    strbuf_release(&text);
}

/* As written, before anything is sent. */
static void test_bind_specs(void **state)
{
    (void)state;
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    static const char *const bad[] = {
        "/", "/etc", "/root/.ssh=/k", "/srv/x/.ssh=/k", "/opt/x=/usr/x", NULL};
    for (size_t i = 0; bad[i]; i++) {
        aka_err_clear(&err);
        assert_int_equal(aka_ssh_check_bind_spec(bad[i], &src, &dst, &err), -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        assert_non_null(strstr(err.msg, "--sandbox-ssh-runtime-bind"));
    }
    assert_int_equal(aka_ssh_check_bind_spec("/opt/conda=/py", &src, &dst, &err), 0);
    assert_string_equal(src.buf, "/opt/conda");
    assert_string_equal(dst.buf, "/py");
    strbuf_release(&src);
    strbuf_release(&dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting),           cmocka_unit_test(test_probe_and_argv_fake_dev),
        cmocka_unit_test(test_two_gpus_fake_dev), cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_parse_two_gpus),    cmocka_unit_test(test_bind_specs),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
