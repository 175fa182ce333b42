/*
 * skills.c — putting our skills and agent definitions where each backend
 * looks for them in an episode worktree (reference §10):
 *
 *   claude    .claude/skills/<skill>/   .claude/agents/<agent>.md
 *   qodercli  .qoder/skills/<skill>/    .qoder/agents/<agent>.md
 *   codex, pi .agents/skills/<skill>/
 *   builtin   nothing (it reads no skills)
 *
 * Sources are runtime/skills/<skill>/ (any directory with a SKILL.md) and
 * the Markdown files of runtime/skills/agents/. They are copied, not linked: an agent that
 * edits a skill in its worktree must not change the asset tree every later
 * episode reads. The directories are added to the repository's
 * info/exclude, so they never show up in an episode's diff.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "git/git.h"

#include <stdio.h>
#include <string.h>

#define COPY_MAX_DEPTH 8

static const char *skills_dir_of(const char *backend)
{
    if (strcmp(backend, "claude") == 0)
        return ".claude";
    if (strcmp(backend, "qodercli") == 0)
        return ".qoder";
    if (strcmp(backend, "codex") == 0 || strcmp(backend, "pi") == 0)
        return ".agents";
    return NULL;
}

const char *aka_agent_skills_hint(const char *backend)
{
    if (!backend || strcmp(backend, "builtin") == 0)
        return "";
    if (strcmp(backend, "claude") == 0)
        return "Your skills are in .claude/skills/ (aka-protocol, kernel-optimization, "
               "plan-review) and the kernel-engineer subagent is in .claude/agents/.";
    if (strcmp(backend, "qodercli") == 0)
        return "Your skills are in .qoder/skills/ (aka-protocol, kernel-optimization, "
               "plan-review): read each SKILL.md and follow it directly; do not start subagents.";
    if (strcmp(backend, "codex") == 0)
        return "Your skills are in .agents/skills/; invoke them as $aka-protocol, "
               "$kernel-optimization and $plan-review.";
    return "Your skills are in .agents/skills/; load them with /skill:aka-protocol, "
           "/skill:kernel-optimization and /skill:plan-review. Never start a nested agent.";
}

/* Copy a tree of regular files and directories (symlinks are skipped). */
static int copy_tree(const char *src, const char *dst, int depth, struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf s = STRBUF_INIT, d = STRBUF_INIT;
    int rc = depth > COPY_MAX_DEPTH ? aka_err_set(err, AKA_EXIT_USAGE, "%s: too deep", src)
                                    : aka_mkdir_p(dst, 0755, err);
    if (rc == 0)
        rc = aka_list_dir(src, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        aka_path_join(&s, src, names.v[i]);
        aka_path_join(&d, dst, names.v[i]);
        if (aka_is_dir(s.buf))
            rc = copy_tree(s.buf, d.buf, depth + 1, err);
        else if (aka_is_file(s.buf))
            rc = aka_copy_file(s.buf, d.buf, err);
    }
    strvec_clear(&names);
    strbuf_release(&s);
    strbuf_release(&d);
    return rc;
}

/* Each runtime/skills/<name>/ holding a SKILL.md, replacing an older copy. */
static int install_skill_dirs(const char *src_root, const char *dst_root, struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, marker = STRBUF_INIT;
    int rc = aka_list_dir(src_root, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        aka_path_join(&src, src_root, names.v[i]);
        aka_path_join(&marker, src.buf, "SKILL.md");
        if (!aka_is_file(marker.buf))
            continue;
        aka_path_join(&dst, dst_root, names.v[i]);
        rc = aka_remove_tree(dst.buf, err);
        if (rc == 0)
            rc = copy_tree(src.buf, dst.buf, 0, err);
    }
    strvec_clear(&names);
    strbuf_release(&src);
    strbuf_release(&dst);
    strbuf_release(&marker);
    return rc;
}

static int install_agents(const char *src_dir, const char *dst_dir, struct aka_err *err)
{
    if (!aka_is_dir(src_dir))
        return 0;
    int rc = aka_remove_tree(dst_dir, err);
    return rc == 0 ? copy_tree(src_dir, dst_dir, 0, err) : rc;
}

/* Keep the installed directory out of git status and every episode diff. */
static void exclude_from_git(const char *worktree, const char *dir)
{
    struct aka_git g;
    struct strbuf common = STRBUF_INIT, path = STRBUF_INIT, text = STRBUF_INIT, line = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_git_open(&g, worktree);
    if (aka_git_run(
            &g,
            (const char *const[]){"rev-parse", "--path-format=absolute", "--git-common-dir", NULL},
            &common, &err) == 0) {
        strbuf_trim(&common);
        aka_path_join(&path, common.buf, "info");
        aka_mkdir_p(path.buf, 0755, &err);
        aka_path_join(&path, common.buf, "info/exclude");
        if (aka_is_file(path.buf))
            aka_read_file(path.buf, &text, AKA_READ_LIMIT_DEFAULT, &err);
        strbuf_addf(&line, "/%s/", dir);
        if (!strstr(text.buf, line.buf)) {
            if (text.len && text.buf[text.len - 1] != '\n')
                strbuf_addch(&text, '\n');
            strbuf_addf(&text, "%s\n", line.buf);
            aka_write_file_atomic(path.buf, text.buf, text.len, 0644, &err);
        }
    }
    aka_git_close(&g);
    strbuf_release(&common);
    strbuf_release(&path);
    strbuf_release(&text);
    strbuf_release(&line);
}

int aka_agent_install_skills(const char *backend, const char *repo_root, const char *worktree,
                             struct aka_err *err)
{
    const char *dir = backend ? skills_dir_of(backend) : NULL;
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, agents = STRBUF_INIT;
    if (!dir)
        return backend && strcmp(backend, "builtin") == 0
                   ? 0
                   : aka_err_set(err, AKA_EXIT_USAGE, "skills: unknown backend \"%s\"",
                                 backend ? backend : "");
    aka_path_join(&src, repo_root, "runtime/skills");
    int rc = aka_is_dir(src.buf) ? 0
                                 : aka_err_set(err, AKA_EXIT_USAGE,
                                               "%s: no skills here (wrong asset tree?)", src.buf);
    strbuf_addf(&dst, "%s/%s/skills", worktree, dir);
    if (rc == 0)
        rc = install_skill_dirs(src.buf, dst.buf, err);
    if (rc == 0 && strcmp(dir, ".agents") != 0) {
        aka_path_join(&agents, src.buf, "agents");
        strbuf_reset(&dst);
        strbuf_addf(&dst, "%s/%s/agents", worktree, dir);
        rc = install_agents(agents.buf, dst.buf, err);
    }
    if (rc == 0)
        exclude_from_git(worktree, dir);
    strbuf_release(&src);
    strbuf_release(&dst);
    strbuf_release(&agents);
    return rc;
}

/* Plugin skills: each directory (holding a SKILL.md) under its own name, beside ours. A
 * plugin skill never replaces a bundled one of the same name: ours are the protocol. */
int aka_agent_install_plugin_skills(const char *backend, const char *worktree,
                                    const struct strvec *dirs, struct aka_err *err)
{
    const char *dir = backend ? skills_dir_of(backend) : NULL;
    struct strbuf dst = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; dir && rc == 0 && i < dirs->n; i++) {
        strbuf_reset(&dst);
        strbuf_addf(&dst, "%s/%s/skills/%s", worktree, dir, aka_basename(dirs->v[i]));
        if (aka_exists(dst.buf))
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "%s: plugin skill %s: a skill of that name is already installed",
                             dirs->v[i], aka_basename(dirs->v[i]));
        else
            rc = copy_tree(dirs->v[i], dst.buf, 0, err);
    }
    if (rc == 0 && dir && dirs->n)
        exclude_from_git(worktree, dir);
    strbuf_release(&dst);
    return rc;
}
