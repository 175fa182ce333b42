# shellcheck shell=bash
# sshd_fixture.sh — a real OpenSSH server on loopback for the ssh transport's tests,
# sourced by tests/integration/ssh_transport.sh and doctor.sh.
#
# sshd_start DIR starts `sshd -D` on a free high port with its own host key, its own
# sshd_config (UsePAM no, StrictModes no, an AuthorizedKeysFile in DIR, password and
# keyboard logins off) and a fresh ed25519 client key, and puts an `ssh` wrapper first
# on PATH that adds `-F DIR/ssh_config` (port, IdentityFile, UserKnownHostsFile holding
# the host key): aka runs the user's `ssh` from PATH and needs nothing else.
#
# The login user: run as root (this project's CI), a throwaway user with no password,
# whose home is DIR/home, is created for the test and deleted at exit, and sshd runs as
# that user (an unprivileged sshd can only log its own user in). Run as anyone else, the
# server runs as and logs in the current user (there is no other user to switch to).
# Sets: SSH_TARGET (USER@127.0.0.1), SSH_PORT, SSH_USER, SSH_HOME, SSH_TMP (the remote
# TMPDIR, where the transport makes its job directories), SSH_RBIN (first on the remote
# PATH, empty: a test puts a fake nvidia-smi there), SSHD_PID.
# Skips (exit 77) when sshd, ssh-keygen or bwrap is missing.

SSHD_BIN=${SSHD_BIN:-/usr/sbin/sshd}

sshd_require() {
    local t
    for t in "$SSHD_BIN" ssh ssh-keygen bwrap; do
        if ! command -v "$t" >/dev/null 2>&1; then
            echo "SKIP: $t is not installed"
            exit 77
        fi
    done
}

sshd_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# sshd_user DIR: the login user (created when root), its home and remote TMPDIR.
sshd_user() {
    local dir=$1
    SSH_HOME=$dir/home
    SSH_TMP=$dir/rtmp
    SSH_RBIN=$dir/rbin
    mkdir -p "$SSH_RBIN"
    if [ "$(id -u)" = 0 ]; then
        SSH_USER=akassh$$
        useradd -M -d "$SSH_HOME" -s /bin/sh "$SSH_USER"
        SSHD_CREATED_USER=$SSH_USER
        # '*' rather than the default '!': sshd without PAM refuses a locked account.
        usermod -p '*' "$SSH_USER"
        mkdir -p "$SSH_HOME" "$SSH_TMP"
        chown "$SSH_USER" "$SSH_HOME" "$SSH_TMP"
        chmod 755 "$dir"
    else
        SSH_USER=$(id -un)
        SSH_HOME=$HOME
        mkdir -p "$SSH_TMP"
    fi
}


sshd_stop() {
    if [ -n "${SSHD_PID:-}" ]; then
        kill "$SSHD_PID" 2>/dev/null || true
        wait "$SSHD_PID" 2>/dev/null || true
        SSHD_PID=
    fi
    if [ -n "${SSHD_CREATED_USER:-}" ]; then
        userdel -f "$SSHD_CREATED_USER" 2>/dev/null || true
        SSHD_CREATED_USER=
    fi
}

sshd_start() {
    local dir=$1
    sshd_require
    sshd_user "$dir"
    ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
    ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
    cp "$dir/client_key.pub" "$dir/authorized_keys"
    chmod 644 "$dir/authorized_keys" "$dir/host_key.pub"
    [ -z "${SSHD_CREATED_USER:-}" ] || chown "$SSHD_CREATED_USER" "$dir/host_key"
    SSH_PORT=$(sshd_free_port)
    cat >"$dir/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $SSH_PORT
HostKey $dir/host_key
PidFile none
UsePAM no
StrictModes no
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowUsers $SSH_USER
SetEnv TMPDIR=$SSH_TMP PATH=$dir/rbin:/usr/local/bin:/usr/bin:/bin
LogLevel ERROR
EOF
    # Started as a simple command (not through a function, which runs in a subshell): $! is
    # sshd itself (setpriv execs it), and killing it ends the server.
    if [ -n "${SSHD_CREATED_USER:-}" ]; then
        setpriv --reuid="$SSHD_CREATED_USER" --regid="$SSHD_CREATED_USER" --init-groups \
            --reset-env -- "$SSHD_BIN" -D -e -f "$dir/sshd_config" >"$dir/sshd.log" 2>&1 &
    else
        "$SSHD_BIN" -D -e -f "$dir/sshd_config" >"$dir/sshd.log" 2>&1 &
    fi
    SSHD_PID=$!
    printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1-2 "$dir/host_key.pub")" \
        >"$dir/known_hosts"
    cat >"$dir/ssh_config" <<EOF
Host 127.0.0.1
  Port $SSH_PORT
  IdentityFile $dir/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking yes
  GlobalKnownHostsFile /dev/null
EOF
    mkdir -p "$dir/bin"
    # Each job's probe is counted in $dir/probes: evidence that jobs went over ssh.
    printf '#!/bin/sh\ncase "$*" in *aka-probe*) echo probe >>%s/probes ;; esac\nexec %s -F %s "$@"\n' \
        "$dir" "$(command -v ssh)" "$dir/ssh_config" >"$dir/bin/ssh"
    chmod 755 "$dir/bin/ssh"
    PATH=$dir/bin:$PATH
    export PATH
    SSH_TARGET=$SSH_USER@127.0.0.1
    local _
    for _ in $(seq 50); do
        ssh -o BatchMode=yes "$SSH_TARGET" true 2>/dev/null && return 0
        sleep 0.1
    done
    echo "FAIL: sshd did not accept the test key:" >&2
    cat "$dir/sshd.log" >&2
    return 1
}
