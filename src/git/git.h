/*
 * git.h — a typed wrapper over the git CLI for the canonical repository and the agents'.
 *
 * aka keeps Git HEAD as the one incumbent (DESIGN §4.4). Everything the
 * supervisor does to a repository goes through these functions, which run the
 * real `git` binary (argv only, via base/proc) with a fixed environment:
 * no user config, no hooks, no pager, no editor, no prompts — a campaign must
 * behave the same on every host, whatever ~/.gitconfig says — and with every
 * repository setting that could make git execute a command overridden (the
 * list is in git.c's header): a repository's .git/config is writable by
 * whoever can reach the repository, so nothing in it may run code in the
 * supervisor.
 *
 * Supervisor commits carry a fixed identity (AKA_GIT_NAME / AKA_GIT_EMAIL) so
 * that recovery can tell its own commits from anything else.
 */
#ifndef AKA_GIT_H
#define AKA_GIT_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <stdbool.h>

#define AKA_GIT_NAME    "aka-supervisor"
#define AKA_GIT_EMAIL   "aka-supervisor@localhost"
#define AKA_GIT_OID_HEX 40

struct aka_git {
    char *dir; /* the work tree (repository or worktree) commands run in */
};

void aka_git_open(struct aka_git *g, const char *dir);
void aka_git_close(struct aka_git *g);

/*
 * Run `git ARGS...` in g->dir. stdout goes to out (may be NULL), trailing
 * newline kept. A non-zero git exit is an error (code 1) whose message holds
 * the command and git's stderr.
 */
int aka_git_run(const struct aka_git *g, const char *const *args, struct strbuf *out,
                struct aka_err *err);

/* `git init -b BRANCH` (directory created if missing). */
int aka_git_init(const char *dir, const char *branch, struct aka_err *err);
/* Resolve a revision to a full object id (40 hex) in oid (size ≥ 41). */
int aka_git_rev_parse(const struct aka_git *g, const char *rev, char *oid, struct aka_err *err);
/* Stage the given paths (NULL-terminated; NULL = everything). */
int aka_git_add(const struct aka_git *g, const char *const *paths, struct aka_err *err);
/* Commit what is staged with the supervisor identity; new HEAD in oid. */
int aka_git_commit(const struct aka_git *g, const char *message, char *oid, struct aka_err *err);
/* True when the work tree and index have no changes (untracked files count). */
int aka_git_is_clean(const struct aka_git *g, bool *clean, struct aka_err *err);
/* Paths changed between two revisions (`git diff --name-only A B`). */
int aka_git_diff_names(const struct aka_git *g, const char *from, const char *to,
                       struct strvec *names, struct aka_err *err);
/* The bytes of REV:PATH. */
int aka_git_show_blob(const struct aka_git *g, const char *rev, const char *path,
                      struct strbuf *out, struct aka_err *err);
/* The current branch name (error when HEAD is detached). */
int aka_git_current_branch(const struct aka_git *g, struct strbuf *out, struct aka_err *err);
/* `git merge --squash --no-commit REV` (the caller commits or resets). */
int aka_git_merge_squash(const struct aka_git *g, const char *rev, struct aka_err *err);
/* `git reset --hard REV`. */
int aka_git_reset_hard(const struct aka_git *g, const char *rev, struct aka_err *err);
/*
 * Fetch exactly the commit `oid` (40 hex) from the repository at path `from` into `ref`
 * of g's repository, with hooks disabled and every received object checked
 * (fetch.fsckObjects): how the supervisor takes a candidate from an agent's repository.
 * Only upload-pack runs in `from`, which reads none of the configuration that makes
 * git execute commands; nothing of `from` is checked out or run. The fetched ref must
 * then name exactly oid (checked here).
 */
int aka_git_fetch_commit(const struct aka_git *g, const char *from, const char *oid,
                         const char *ref, struct aka_err *err);
/* HEAD of the repository at path `from` as its upload-pack reports it (ls-remote): the
 * branch HEAD names (refs/heads/ stripped; "" when detached) and its commit. */
int aka_git_remote_head(const struct aka_git *g, const char *from, struct strbuf *branch, char *oid,
                        struct aka_err *err);
/* Whether ANCESTOR is an ancestor of REV. */
int aka_git_is_ancestor(const struct aka_git *g, const char *ancestor, const char *rev, bool *yes,
                        struct aka_err *err);

/* Write the index as a tree; its id in oid. */
int aka_git_write_tree(const struct aka_git *g, char *oid, struct aka_err *err);
/* A commit of TREE on PARENT (NULL or "": a root commit) with the supervisor identity;
 * no ref moves. Its id in oid. */
int aka_git_commit_tree(const struct aka_git *g, const char *tree, const char *parent,
                        const char *message, char *oid, struct aka_err *err);
/* Move REF to NEW only while it still is OLD (NULL or "": only while REF does not exist). */
int aka_git_update_ref(const struct aka_git *g, const char *ref, const char *new_oid,
                       const char *old_oid, struct aka_err *err);

/* What identifies a commit: its id, first parent, tree, author name and subject. */
struct aka_git_commit_info {
    char oid[AKA_GIT_OID_HEX + 1], parent[AKA_GIT_OID_HEX + 1], tree[AKA_GIT_OID_HEX + 1];
    int parents; /* 0 (root), 1, or 2 for "two or more" */
    char author[256];
    char subject[512];
};
int aka_git_commit_info(const struct aka_git *g, const char *rev, struct aka_git_commit_info *ci,
                        struct aka_err *err);
/* The commits of REV's first-parent line, newest first. */
int aka_git_first_parents(const struct aka_git *g, const char *rev, struct strvec *oids,
                          struct aka_err *err);
/* The files of DIR/ in REV's tree: their paths (relative to the repository) and blob ids,
 * in the same order. Entries that are not blobs are left out. */
int aka_git_ls_blobs(const struct aka_git *g, const char *rev, const char *dir,
                     struct strvec *names, struct strvec *oids, struct aka_err *err);

#endif
