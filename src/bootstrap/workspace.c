/*
 * workspace.c — creating a campaign workspace.
 *
 * The workspace is a Git repository whose HEAD is the incumbent. It holds the
 * evaluator inputs an agent may read (never the private ones of a generalized
 * production campaign), the one kernel file episodes may change, a README brief
 * and a .gitignore (workspace/: supervisor state and the live progress view are
 * never committed). Where each file lives is workspace/'s to say.
 */
#include "base/fs.h"
#include "bootstrap/bootstrap.h"
#include "git/git.h"

#include <string.h>
#include <sys/stat.h>

void aka_workspace_visible_inputs(const struct aka_operator *op, bool production,
                                  struct strvec *out)
{
    static const char *const atrex_full[] = {
        "reference.py",  "input.py", "shapes.json", "roofline.json",
        "metadata.json", "valid.py", NULL};
    /* Generalized production keeps exact shapes private (DESIGN §4.2). */
    static const char *const atrex_generalized[] = {"reference.py", "input.py",
                                                    "agent_problem.json", NULL};
    static const char *const sol[] = {"definition.json", "reference.py", "workload.jsonl", NULL};
    if (op->layout == AKA_LAYOUT_NATIVE) {
        struct strbuf p = STRBUF_INIT;
        strvec_push(out, "operator.json");
        strvec_push(out, op->native.reference_file);
        /* The public problem of a generalized campaign (the public operator holds it). */
        aka_path_join(&p, op->dir, AKA_AGENT_PROBLEM_FILE);
        if (production && aka_is_file(p.buf))
            strvec_push(out, AKA_AGENT_PROBLEM_FILE);
        strbuf_release(&p);
        return;
    }
    const char *const *list = op->layout == AKA_LAYOUT_SOL ? sol
                              : production                 ? atrex_generalized
                                                           : atrex_full;
    struct strbuf p = STRBUF_INIT;
    for (int i = 0; list[i]; i++) {
        aka_path_join(&p, op->dir, list[i]);
        if (aka_is_file(p.buf))
            strvec_push(out, list[i]);
        strbuf_reset(&p);
    }
    strbuf_release(&p);
}

/* Write a file only when it does not exist yet (a crashed first start is completed). */
static int write_new(const char *ws, const char *name, const char *text, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, ws, name);
    int rc = aka_exists(p.buf) ? 0 : aka_write_file_atomic(p.buf, text, strlen(text), 0644, err);
    strbuf_release(&p);
    return rc;
}

static int copy_new(const char *src_dir, const char *src, const char *ws, const char *dst,
                    struct aka_err *err)
{
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    aka_path_join(&from, src_dir, src);
    aka_path_join(&to, ws, dst);
    int rc = 0;
    if (!aka_exists(to.buf)) {
        struct strbuf dir = STRBUF_INIT;
        strbuf_addstr(&dir, to.buf);
        char *slash = strrchr(dir.buf, '/');
        if (slash)
            strbuf_setlen(&dir, (size_t)(slash - dir.buf));
        rc = aka_mkdir_p(dir.buf, 0755, err) < 0 ? -1 : aka_copy_file(from.buf, to.buf, err);
        strbuf_release(&dir);
    }
    strbuf_release(&from);
    strbuf_release(&to);
    return rc;
}

static void readme(const struct aka_operator *op, const struct aka_campaign *c, const char *notes,
                   struct strbuf *sb)
{
    strbuf_addf(sb, "# Campaign: %s (%s on %s, %s mode)\n\n", c->op_name, c->framework, c->platform,
                c->mode);
    strbuf_addf(sb,
                "Goal: minimize the latency of `%s` over the whole evaluator workload with every "
                "case correct.\n\n",
                c->kernel);
    strbuf_addf(sb, "- operator layout: %s (%zu evaluator shapes)\n", c->layout, op->shapes.n);
    strbuf_addf(sb, "- kernel file: `%s` — the only file an episode may change\n", c->kernel);
    strbuf_addf(sb, "- agent: %s\n- notes: %s\n\n", c->agent, notes && *notes ? notes : "none");
    strbuf_addstr(sb, "Evaluator inputs in this directory are immutable: a candidate that changes "
                      "them is rejected.\nMeasure only with `aka eval` (it runs in the sandbox and "
                      "records the kernel's sha256);\nthe supervisor verifies every candidate "
                      "itself before it becomes the incumbent (Git HEAD).\n\n"
                      "Canonical history: `memory/v<N>.json` (read with `aka memory latest`, "
                      "`aka memory show vN`).\n");
}

static bool ident_char(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9');
}

/* The native V0 kernel is the reference under the candidate's entry name: the
 * harness links both, so the reference's own symbol must not appear twice. */
static void rename_symbol(const char *src, const char *from, const char *to, struct strbuf *out)
{
    size_t n = strlen(from);
    for (const char *p = src; *p;) {
        bool start = p == src || !ident_char(p[-1]);
        if (start && strncmp(p, from, n) == 0 && !ident_char(p[n])) {
            strbuf_addstr(out, to);
            p += n;
        } else {
            strbuf_addch(out, *p++);
        }
    }
}

static int native_kernel(const struct aka_operator *op, const char *ws, const char *kernel,
                         struct aka_err *err)
{
    struct strbuf src = STRBUF_INIT, text = STRBUF_INIT, p = STRBUF_INIT;
    aka_path_join(&p, op->dir, op->native.reference_file);
    int rc = aka_read_file(p.buf, &src, AKA_READ_LIMIT_DEFAULT, err);
    if (rc == 0) {
        rename_symbol(src.buf, op->native.reference_entry, op->native.entry, &text);
        rc = write_new(ws, kernel, text.buf, err);
    }
    strbuf_release(&src);
    strbuf_release(&text);
    strbuf_release(&p);
    return rc;
}

/* The SOL V0 kernel (upstream's route A, described there, written here): the
 * reference with its top-level `def run(` renamed to `_ref`, then a
 * destination-passing run(<inputs>, <outputs>) — the calling convention the SOL
 * evaluator uses by default — that copies _ref's results into the outputs the
 * evaluator allocated. Slice assignment keeps the caller's tensors (and casts). */
static void sol_v0_text(const struct aka_operator *op, struct strbuf *out)
{
    const char *ref = op->sol.reference;
    for (const char *line = ref; *line;) {
        size_t n = strcspn(line, "\n");
        if (strncmp(line, "def run(", 8) == 0)
            strbuf_addstr(out, "def _ref("), strbuf_add(out, line + 8, n - 8);
        else
            strbuf_add(out, line, n);
        strbuf_addch(out, '\n');
        line += n + (line[n] == '\n');
    }
    strbuf_addstr(out, "\n\n# V0: the reference above in destination-passing style.\ndef run(");
    for (size_t i = 0; i < op->inputs.n + op->outputs.n; i++) {
        bool is_in = i < op->inputs.n;
        const char *name = is_in ? op->inputs.v[i].name : op->outputs.v[i - op->inputs.n].name;
        strbuf_addf(out, "%s%s", i ? ", " : "", name);
    }
    strbuf_addstr(out, "):\n    result = _ref(");
    for (size_t i = 0; i < op->inputs.n; i++)
        strbuf_addf(out, "%s%s", i ? ", " : "", op->inputs.v[i].name);
    strbuf_addstr(out,
                  ")\n    results = result if isinstance(result, (tuple, list)) else (result,)\n"
                  "    for dst, src in zip((");
    for (size_t i = 0; i < op->outputs.n; i++)
        strbuf_addf(out, "%s, ", op->outputs.v[i].name);
    strbuf_addstr(out, "), results):\n        dst[...] = src\n");
}

static int sol_kernel(const struct aka_operator *op, const char *ws, const char *kernel,
                      struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    sol_v0_text(op, &text);
    int rc = write_new(ws, kernel, text.buf, err);
    strbuf_release(&text);
    return rc;
}

static int v0_kernel(const struct aka_operator *op, const char *ws, const char *kernel,
                     struct aka_err *err)
{
    if (op->layout == AKA_LAYOUT_NATIVE)
        return native_kernel(op, ws, kernel, err);
    if (op->layout == AKA_LAYOUT_SOL && op->sol.reference)
        return sol_kernel(op, ws, kernel, err);
    return copy_new(op->dir, "reference.py", ws, kernel, err);
}

int aka_workspace_materialize(const char *ws, const struct aka_operator *op,
                              const struct aka_campaign *c, const char *notes, struct aka_err *err)
{
    struct strvec inputs = STRVEC_INIT;
    struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
    int rc = aka_mkdir_p(ws, 0755, err);
    aka_path_join(&p, ws, ".git");
    if (rc == 0 && !aka_exists(p.buf))
        rc = aka_git_init(ws, "main", err);
    aka_workspace_visible_inputs(op, strcmp(c->mode, "production") == 0, &inputs);
    for (size_t i = 0; rc == 0 && i < inputs.n; i++)
        rc = copy_new(op->dir, inputs.v[i], ws, inputs.v[i], err);
    if (rc == 0)
        rc = v0_kernel(op, ws, c->kernel, err);
    readme(op, c, notes, &text);
    if (rc == 0)
        rc = write_new(ws, "README.md", text.buf, err);
    if (rc == 0)
        rc = write_new(ws, ".gitignore", aka_ws_gitignore(), err);
    aka_ws_path(&p, ws, AKA_WS_MEMORY);
    if (rc == 0)
        rc = aka_mkdir_p(p.buf, 0755, err);
    strvec_clear(&inputs);
    strbuf_release(&p);
    strbuf_release(&text);
    return rc;
}
