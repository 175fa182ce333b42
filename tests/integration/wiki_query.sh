#!/usr/bin/env bash
# wiki_query.sh — run the query suite tests/wiki/queries.tsv against the real
# aka binary and the bundled gpu-wiki plugin, with a private cache and no
# user or workspace plugins. Prints one line per case; fails if any case fails.
set -u
AKA_BIN=${AKA_BIN:?set AKA_BIN to the aka binary}
SRC=${AKA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SUITE=${1:-$SRC/tests/wiki/queries.tsv}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-wiki-query.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME=$TMP/cache XDG_DATA_HOME=$TMP/data HOME=$TMP/home
unset ATREX_AKA_WORKSPACE ATREX_AKA_HOME

pass=0 fail=0
check_case() { # name rc check out code
    local name=$1 want=$2 check=$3 out=$4 code=$5 kind=${3%%:*} arg=${3#*:}
    [ "$code" = "$want" ] || { echo "exit $code, expected $want"; return 1; }
    case $kind in
    first) grep -qE "^1\. ${arg//./\\.} " <<<"$out" || { echo "first result is not $arg"; return 1; } ;;
    top3) grep -E '^[123]\. ' <<<"$out" | grep -qF " $arg " || { echo "$arg not in top 3"; return 1; } ;;
    re) grep -Pzq -- "$arg" <<<"$out" || { echo "no match for /$arg/"; return 1; } ;;
    '!re') ! grep -qE -- "$arg" <<<"$out" || { echo "unexpected match for /$arg/"; return 1; } ;;
    jq) jq -e "$arg" <<<"$out" >/dev/null 2>&1 || { echo "jq check failed: $arg"; return 1; } ;;
    *) echo "unknown check kind '$kind'"; return 1 ;;
    esac
}

while IFS=$'\t' read -r name rc check args; do
    case $name in '' | '#'*) continue ;; esac
    eval "set -- $args"
    if [[ $check == jq:* ]]; then
        out=$("$AKA_BIN" wiki --repo-root "$SRC" "$@" 2>/dev/null)
    else
        out=$("$AKA_BIN" wiki --repo-root "$SRC" "$@" 2>&1)
    fi
    code=$?
    if why=$(check_case "$name" "$rc" "$check" "$out" "$code"); then
        pass=$((pass + 1)); echo "ok   $name"
    else
        fail=$((fail + 1)); echo "FAIL $name: $why"; echo "     aka wiki $args"
        sed 's/^/     | /' <<<"$out" | head -20
    fi
done <"$SUITE"
echo "wiki query suite: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -ge 40 ]
