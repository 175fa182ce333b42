"""fakelib.py — what the four fake agent CLIs share.

Each fake (fake-claude, fake-codex, fake-qodercli, fake-pi) checks that it was
started with its real CLI's command line, logs that command line, and then
acts out a scenario while printing its CLI's real event format. Only the
event shapes differ between fakes; the scenario language is common.

Environment:
  AKA_FAKE_SCENARIO  JSON file: {"turns": [TURN, ...]}; invocation k plays
                     turns[k] (the last turn repeats).
  AKA_FAKE_LOG       JSON-lines log: one record per invocation (argv, cwd,
                     prompt source, selected environment variables).
  AKA_FAKE_STATE     directory for the invocation counter (default: the
                     log's directory).

TURN: {"actions": [ACTION, ...], "exit": 0, "terminal": true}
ACTION (one key decides):
  {"usage": {"input": N, "output": N, "cache_read": N, "cache_write": N},
   "id": "msg_1", "repeat": 1}        one model call (repeat: same id again)
  {"text": "..."}                      a plain-text noise line
  {"broken_json": true}                a truncated JSON line
  {"write": PATH, "content": TEXT}     write a file (relative to cwd)
  {"sh": "COMMAND"}                    bash -c COMMAND as a tool call
  {"run": [ARGV...]}                   exec ARGV (no shell) as a tool call
  {"phase": "start"|"end", "name": P}  `aka trace phase-start|phase-end P`
  {"commit": "MSG", "paths": [...]}    git add + commit (HEAD remembered)
  {"handoff": STATUS, "path": P}       write a handoff naming the last commit
  {"spawn": [ARGV...]}                 start ARGV in the background (no shell);
                                       the start time goes to $AKA_FAKE_STATE/spawned
  {"sleep": SECONDS}
  {"api_error": true}                  Claude's transient "API Error: terminated"
  {"compaction": {...usage...}}        Pi compaction with usage
  {"duplicate_token_count": true}      Codex: repeat the last ledger record
  {"signal": "TERM"|"KILL"|"SEGV"}     send it to ourselves
  {"hang": true}                       sleep forever
  {"say": "TEXT"}                      the model's answer (its final message)
  {"say_file": PATH}                   the same, read from a file
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

LOGGED_ENV = [
    "ATREX_AGENT_CLI", "BASH_ENV", "IS_SANDBOX", "PIP_ONLY_BINARY", "PIP_DISABLE_PIP_VERSION_CHECK",
    "ATREX_AKA_TRACE_FILE", "ATREX_AKA_ATTEMPT_ID", "ATREX_PROTECTED_GATEWAY_SCREEN",
    "ATREX_PROTECTED_GATEWAY_STATE_DIR", "PI_SKIP_VERSION_CHECK", "PI_TELEMETRY", "CODEX_HOME",
    "ATREX_AKA_WORKSPACE", "ATREX_AKA_EPISODE", "ATREX_AKA_AGENT_SANDBOX",
]


def die(cli, msg):
    sys.stderr.write("%s: bad command line: %s\n" % (cli, msg))
    sys.exit(64)


def is_uuid(s):
    try:
        return str(uuid.UUID(s)) == s
    except ValueError:
        return False


class Fake:
    """One invocation: subclasses emit the CLI's own event shapes."""

    name = "fake"

    def __init__(self, argv):
        self.argv = argv
        self.prompt_source = "argv"
        self.prompt = ""
        self.head = None
        self.answer = None  # the last "say": the CLI's final message
        self.calls = []  # usage of each distinct model call this invocation
        self.state_dir = os.environ.get("AKA_FAKE_STATE") or os.path.dirname(
            os.environ.get("AKA_FAKE_LOG", "/tmp/x")) or "."
        self.turn_index = self._next_turn()

    # ---- bookkeeping ------------------------------------------------------

    def _next_turn(self):
        path = os.path.join(self.state_dir, "fake-invocations")
        n = 0
        if os.path.exists(path):
            with open(path) as f:
                n = int(f.read().strip() or 0)
        with open(path, "w") as f:
            f.write(str(n + 1))
        return n

    def read_stdin_prompt(self):
        self.prompt = sys.stdin.read()
        self.prompt_source = "stdin"
        if not self.prompt:
            die(self.name, "no prompt on the command line and nothing on stdin")

    def log(self, extra):
        stdin_eof = None
        if self.prompt_source != "stdin":
            stdin_eof = sys.stdin.read(1) == ""
        rec = {
            "cli": self.name, "argv": self.argv, "cwd": os.getcwd(), "turn": self.turn_index,
            "prompt_source": self.prompt_source, "prompt_len": len(self.prompt),
            "prompt_head": self.prompt[:200], "stdin_at_eof": stdin_eof,
            "env": {k: os.environ.get(k) for k in LOGGED_ENV},
            "has_private_reference": "ATREX_PRIVATE_REFERENCE_DIR" in os.environ,
            "has_anthropic_api_key": "ANTHROPIC_API_KEY" in os.environ,
        }
        rec.update(extra)
        path = os.environ.get("AKA_FAKE_LOG")
        if path:
            with open(path, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def emit(self, obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def scenario_turn(self):
        path = os.environ.get("AKA_FAKE_SCENARIO")
        if not path:
            return {"actions": [], "exit": 0}
        with open(path) as f:
            turns = json.load(f)["turns"]
        return turns[min(self.turn_index, len(turns) - 1)]

    # ---- the CLI's event shapes (overridden) --------------------------------

    def on_start(self):
        pass

    def on_usage(self, usage, msg_id, repeat):
        pass

    def on_tool(self, command, output, ok):
        pass

    def on_terminal(self):
        pass

    def on_api_error(self):
        pass

    def on_compaction(self, usage):
        pass

    def on_duplicate(self):
        pass

    def on_say(self, text):
        pass

    # ---- acting out the scenario ---------------------------------------------

    def tool(self, argv, shell=False):
        proc = subprocess.run(argv, shell=shell, executable="/bin/bash" if shell else None,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        cmd = argv if shell else " ".join(argv)
        self.on_tool(cmd, proc.stdout, proc.returncode == 0)

    def act(self, a):
        if "usage" in a:
            u = {k: int(a["usage"].get(k, 0)) for k in ("input", "output", "cache_read", "cache_write")}
            self.calls.append(u)
            self.on_usage(u, a.get("id") or "msg_%s" % uuid.uuid4().hex[:12], int(a.get("repeat", 1)))
        elif "text" in a:
            sys.stdout.write(a["text"] + "\n")
        elif "broken_json" in a:
            sys.stdout.write('{"type": "assistant", "message": {"id": "broken\n')
        elif "write" in a:
            with open(os.path.join(self.state_dir, "spawned"), "w") as f:
                f.write("%d\n" % time.time_ns())
            os.makedirs(os.path.dirname(os.path.abspath(a["write"])), exist_ok=True)
            with open(a["write"], "w") as f:
                f.write(a["content"])
        elif "sh" in a:
            self.tool(a["sh"], shell=True)
        elif "run" in a:
            self.tool(a["run"])
        elif "phase" in a:
            self.tool(["aka", "trace", "phase-" + a["phase"], a["name"]])
        elif "commit" in a:
            subprocess.run(["git", "add", "--"] + a.get("paths", ["."]), check=True)
            subprocess.run(["git", "-c", "user.name=fake", "-c", "user.email=fake@localhost",
                            "commit", "-q", "-m", a["commit"]], check=True)
            self.head = subprocess.run(["git", "rev-parse", "HEAD"], check=True,
                                       stdout=subprocess.PIPE, text=True).stdout.strip()
        elif "handoff" in a:
            doc = {"status": a["handoff"]}
            if a["handoff"] == "candidate_ready":
                doc["candidate_commit"] = self.head or subprocess.run(
                    ["git", "rev-parse", "HEAD"], check=True, stdout=subprocess.PIPE,
                    text=True).stdout.strip()
            with open(a.get("path", "handoff.json"), "w") as f:
                json.dump(doc, f)
        elif "spawn" in a:
            with open(os.path.join(self.state_dir, "spawned"), "w") as f:
                f.write("%d\n" % time.time_ns())  # when the offending process was started
            subprocess.Popen(a["spawn"], stdin=subprocess.DEVNULL)
        elif "sleep" in a:
            time.sleep(float(a["sleep"]))
        elif "api_error" in a:
            self.on_api_error()
        elif "compaction" in a:
            u = {k: int(a["compaction"].get(k, 0)) for k in ("input", "output", "cache_read", "cache_write")}
            self.calls.append(u)
            self.on_compaction(u)
        elif "duplicate_token_count" in a:
            self.on_duplicate()
        elif "signal" in a:
            sys.stdout.flush()
            os.kill(os.getpid(), getattr(signal, "SIG" + a["signal"]))
            time.sleep(5)
        elif "say" in a or "say_file" in a:
            text = a["say"] if "say" in a else open(a["say_file"]).read()
            self.answer = text
            self.on_say(text)
        elif "hang" in a:
            while True:
                time.sleep(60)

    def run(self):
        turn = self.scenario_turn()
        self.on_start()
        for a in turn.get("actions", []):
            self.act(a)
        if turn.get("terminal", True):
            self.on_terminal()
        sys.stdout.flush()
        sys.exit(int(turn.get("exit", 0)))


def summed(calls):
    t = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for c in calls:
        for k in t:
            t[k] += c[k]
    return t
