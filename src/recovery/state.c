/*
 * state.c — the recovery state directory: where it is, the recorded command
 * (restart.json), the monitor's state.json, the stop flag and the two scripts.
 * Every file is replaced atomically (base/fs), so a reader never sees half of one.
 */
#include "recovery/internal.h"

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "contracts/records.h"

#include <string.h>
#include <unistd.h>

int aka_recovery_state_dir(const char *ws, struct strbuf *out, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT, parent = STRBUF_INIT;
    char hex[AKA_SHA256_HEX_LEN + 1];
    if (aka_realpath(ws, &real, err) < 0)
        return -1;
    aka_sha256_hex(real.buf, real.len, hex);
    strbuf_add(&parent, real.buf, (size_t)(strrchr(real.buf, '/') - real.buf));
    strbuf_reset(out);
    strbuf_addf(out, "%s/.aka-environment/%.16s", parent.len ? parent.buf : "", hex);
    strbuf_release(&real);
    strbuf_release(&parent);
    return 0;
}

void rcv_path(struct strbuf *out, const char *dir, const char *name)
{
    strbuf_reset(out);
    aka_path_join(out, dir, name);
}

bool rcv_exists(const char *dir, const char *name)
{
    struct strbuf p = STRBUF_INIT;
    rcv_path(&p, dir, name);
    bool yes = aka_exists(p.buf);
    strbuf_release(&p);
    return yes;
}

int rcv_write_json(const char *dir, const char *name, const json_t *doc, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    rcv_path(&p, dir, name);
    int rc = aka_json_write_file(p.buf, doc, err);
    strbuf_release(&p);
    return rc;
}

json_t *rcv_read_json(const char *dir, const char *name)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *doc = NULL;
    rcv_path(&p, dir, name);
    if (aka_exists(p.buf) && aka_json_load_file(p.buf, &doc, &ignored) < 0)
        doc = NULL;
    strbuf_release(&p);
    return doc;
}

int rcv_remove(const char *dir, const char *name, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    rcv_path(&p, dir, name);
    int rc = aka_exists(p.buf) ? aka_remove_tree(p.buf, err) : 0;
    if (rc == 0)
        rc = aka_fsync_dir(dir, err);
    strbuf_release(&p);
    return rc;
}

/* ---- restart.json ---------------------------------------------------------------------- */

json_t *rcv_launch_json(const struct aka_recovery_launch *l, const char *ws, int poll)
{
    char now[AKA_TIMESTAMP_MAX];
    aka_record_now(now);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:i}", "schema",
                     "aka.recovery.restart.v1", "created_at", now, "workspace", ws, "exe",
                     l->exe.buf, "repo_root", l->repo_root.buf, "cwd", l->cwd.buf, "args",
                     aka_json_string_array(&l->args), "poll_interval", poll);
}

/* A string field of restart.json, or a one-line error naming it. */
static const char *field(const char *dir, json_t *doc, const char *key, struct aka_err *err)
{
    const char *v = json_string_value(json_object_get(doc, key));
    if (!v || !*v)
        aka_err_set(err, AKA_EXIT_USAGE, "%s/restart.json: %s: expected a non-empty string", dir,
                    key);
    return v;
}

int rcv_launch_load(const char *dir, struct aka_recovery_launch *l, char **ws, int *poll,
                    struct aka_err *err)
{
    json_t *doc = rcv_read_json(dir, "restart.json"), *args, *a;
    const char *exe = NULL, *root = NULL, *cwd = NULL, *w = NULL;
    size_t i;
    if (!doc)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s/restart.json: missing or not JSON", dir);
    args = json_object_get(doc, "args");
    if ((exe = field(dir, doc, "exe", err)) && (root = field(dir, doc, "repo_root", err)) &&
        (cwd = field(dir, doc, "cwd", err)) && (w = field(dir, doc, "workspace", err))) {
        strbuf_addstr(&l->exe, exe);
        strbuf_addstr(&l->repo_root, root);
        strbuf_addstr(&l->cwd, cwd);
        *ws = aka_xstrdup(w);
        *poll = (int)json_integer_value(json_object_get(doc, "poll_interval"));
        json_array_foreach(args, i, a) if (json_is_string(a))
            strvec_push(&l->args, json_string_value(a));
    }
    bool ok = w && l->args.n > 0 && *poll >= 1;
    if (w && !ok)
        aka_err_set(err, AKA_EXIT_USAGE,
                    "%s/restart.json: args and poll_interval: expected a command and an interval "
                    ">= 1",
                    dir);
    json_decref(doc);
    return ok ? 0 : -1;
}

/* ---- state.json ---------------------------------------------------------------------- */

int rcv_state_write(const char *dir, const struct rcv_state *s, struct aka_err *err)
{
    char now[AKA_TIMESTAMP_MAX];
    aka_record_now(now);
    json_t *doc =
        json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:i, s:s, s:{s:s, s:b, s:s}}",
                  "schema", "aka.recovery.state.v1", "phase", s->phase, "workspace", s->ws,
                  "attempts", (json_int_t)s->attempts, "monitor_pid", (json_int_t)s->monitor_pid,
                  "monitor_start_ticks", (json_int_t)s->monitor_ticks, "optimizer_pid",
                  (json_int_t)s->child_pid, "optimizer_start_ticks", (json_int_t)s->child_ticks,
                  "handoff", s->handoff, "last_exit", s->last_exit, "updated_at", now, "last_probe",
                  "at", s->probe_at, "ok", s->probe_ok, "output", s->probe_output);
    int rc = doc ? rcv_write_json(dir, "state.json", doc, err)
                 : aka_err_set(err, AKA_EXIT_FAILED, "%s/state.json: cannot build it", dir);
    json_decref(doc);
    return rc;
}

void rcv_state_load(const char *dir, struct rcv_state *s)
{
    json_t *doc = rcv_read_json(dir, "state.json");
    const char *phase = json_string_value(json_object_get(doc, "phase"));
    s->attempts = json_integer_value(json_object_get(doc, "attempts"));
    s->monitor_pid = (long long)json_integer_value(json_object_get(doc, "monitor_pid"));
    s->monitor_ticks =
        (unsigned long long)json_integer_value(json_object_get(doc, "monitor_start_ticks"));
    s->child_pid = (long long)json_integer_value(json_object_get(doc, "optimizer_pid"));
    s->child_ticks =
        (unsigned long long)json_integer_value(json_object_get(doc, "optimizer_start_ticks"));
    json_t *probe = json_object_get(doc, "last_probe");
    const char *at = json_string_value(json_object_get(probe, "at"));
    const char *output = json_string_value(json_object_get(probe, "output"));
    snprintf(s->phase_buf, sizeof(s->phase_buf), "%s", phase ? phase : "");
    s->phase = s->phase_buf;
    s->last_exit = json_is_integer(json_object_get(doc, "last_exit"))
                       ? (int)json_integer_value(json_object_get(doc, "last_exit"))
                       : -1;
    s->probe_ok = json_is_true(json_object_get(probe, "ok"));
    snprintf(s->probe_at, sizeof(s->probe_at), "%s", at ? at : "");
    snprintf(s->probe_output, sizeof(s->probe_output), "%s", output ? output : "");
    json_decref(doc);
}

/* ---- the scripts ------------------------------------------------------------------------ */

/* s in single quotes for sh: every ' becomes '\''. */
static void sh_quote(struct strbuf *out, const char *s)
{
    strbuf_addch(out, '\'');
    for (; *s; s++)
        if (*s == '\'')
            strbuf_addstr(out, "'\\''");
        else
            strbuf_addch(out, *s);
    strbuf_addch(out, '\'');
}

static int write_script(const char *dir, const char *name, const char *what,
                        const struct aka_recovery_launch *l, const char *verb, const char *ws,
                        struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT, p = STRBUF_INIT;
    strbuf_addf(&text, "#!/bin/sh\n# Written by aka (docs/recovery.md): %s\nexec ", what);
    sh_quote(&text, l->exe.buf);
    strbuf_addstr(&text, " --repo-root ");
    sh_quote(&text, l->repo_root.buf);
    strbuf_addf(&text, " recovery %s ", verb);
    sh_quote(&text, ws);
    strbuf_addstr(&text, " \"$@\"\n");
    rcv_path(&p, dir, name);
    int rc = aka_write_file_atomic(p.buf, text.buf, text.len, 0700, err);
    strbuf_release(&text);
    strbuf_release(&p);
    return rc;
}

int rcv_write_scripts(const char *dir, const struct aka_recovery_launch *l, const char *ws,
                      struct aka_err *err)
{
    if (write_script(dir, "stop-recovery.sh",
                     "stop the recovered optimizer and disable auto-recovery until recover.sh "
                     "runs",
                     l, "stop", ws, err) < 0)
        return -1;
    return write_script(dir, "recover.sh", "enable auto-recovery again and start the monitor", l,
                        "resume", ws, err);
}
