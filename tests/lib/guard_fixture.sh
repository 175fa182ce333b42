# guard_fixture.sh — sourced by the guard tests (agents_guard.sh, gpu_device.sh).
#
# new_case NAME: $c = $tmp/NAME holding a one-commit Git worktree ($c/wt, kernel.c)
#   and a brief ($c/brief.md) for one `aka agent-session`.
new_case() {
  c="$tmp/$1"
  mkdir -p "$c"
  git init -q "$c/wt"
  printf 'int k;\n' >"$c/wt/kernel.c"
  git -C "$c/wt" add kernel.c
  git -C "$c/wt" -c user.name=t -c user.email=t@t commit -qm v0
  printf 'brief\n' >"$c/brief.md"
}
