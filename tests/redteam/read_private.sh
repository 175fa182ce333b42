# read_private.sh — red-team candidate: hunts for data outside its allowlist.
# Arguments: host paths it should not be able to see (a planted private
# shapes.json, the user's home, ...) and, last, a secret token planted in them.
# Prints what it finds; the test fails if the token ever shows up.
token=""
for last in "$@"; do token=$last; done
for path in "$@"; do
    [ "$path" = "$token" ] && continue
    if [ -e "$path" ]; then
        echo "VISIBLE $path"
        cat "$path" 2>/dev/null
        ls -la "$path" 2>/dev/null
    else
        echo "absent $path"
    fi
done
# A blind search of every visible top-level directory except kernel views and
# the read-only system tree (the host's /usr, where the test plants nothing).
# Symlinks at the top (/bin -> usr/bin) are skipped for the same reason.
for dir in /* /.[!.]*; do
    case "$dir" in /proc | /sys | /dev | /usr) continue ;; esac
    [ -L "$dir" ] || [ ! -d "$dir" ] && continue
    grep -rs -l -- "$token" "$dir" 2>/dev/null | sed 's/^/FOUND-IN /'
done
echo "search done"
