# escape_write.sh — red-team candidate: tries to write outside its job directory.
# Arguments are host paths the test watches; each write is attempted directly
# and after creating the parent directory, then /usr is attacked directly and by
# remounting it read-write. Prints one line per attempt; the test decides from
# the host side whether anything escaped.
for target in "$@"; do
    if (echo escaped > "$target") 2>/dev/null; then
        echo "wrote-inside-sandbox $target"
    elif mkdir -p "$(dirname "$target")" 2>/dev/null && (echo escaped > "$target") 2>/dev/null; then
        echo "wrote-after-mkdir $target"
    else
        echo "refused $target"
    fi
done
if (echo escaped > /usr/aka-escape-probe) 2>/dev/null; then echo "USR-WRITTEN"; else echo "usr-refused"; fi
if mount -o remount,rw,bind /usr 2>/dev/null; then echo "USR-REMOUNTED"; else echo "remount-refused"; fi
if mount -t tmpfs none /usr 2>/dev/null; then echo "MOUNTED"; else echo "mount-refused"; fi
