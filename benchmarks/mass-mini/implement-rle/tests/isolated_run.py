"""Runs the agent's code in a child process whose results come back over a
pipe, so that only the verifier's own process writes the reward.

The agent's code runs as the same user as the verifier: it could write
/logs/verifier itself, kill its parent, leave a process behind that writes a
reward later, trace the verifier or read its memory. Against each of these:

- guard_self() (called before any of the agent's code runs) makes this
  process not dumpable, so that no other process of the user can trace it,
  read its memory or open its files through /proc, and a child subreaper,
  so that every process the agent's code starts stays below this one, even
  one that double-forks or starts a session of its own;
- run_child() starts the child with `python3 -I` (no PYTHON* variables, no
  user site, no working folder on the module path), in a scratch folder,
  with an environment that names neither the logs nor the tests, in a
  session of its own; the cases go in as a file, the results come back as
  JSON lines on a pipe (bounded), the module's own prints go elsewhere;
- once the child has exited or timed out, end_descendants() kills every
  process left below this one, so that nothing the agent started is alive
  when the reward is written;
- write_reward() removes whatever reward file is there (a file, a link or a
  folder the agent's code put in its place) and writes the reward
  atomically (a new file renamed over the name).

A child that kills this process ends the verifier by a signal: the reward
file it may have left is then not trusted (mass records the verification as
crashed, and check.sh counts no reward), so killing the verifier never
scores.
"""

import ctypes
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
OUTPUT_LIMIT = 8 * 1024 * 1024
REWARD_FILES = ("reward.txt", "reward.json")


def guard_self():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def run_child(runner, module, cases, timeout):
    """Returns (result lines, stderr tail, how it ended) of runner.py on the
    module, with the cases given as a file in a fresh scratch folder."""
    scratch = tempfile.mkdtemp(prefix="verifier-child-")
    cases_file = os.path.join(scratch, "cases.json")
    with open(cases_file, "w") as fh:
        json.dump(cases, fh)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch, "LANG": "C.UTF-8"}
    proc = subprocess.Popen(
        [sys.executable, "-I", runner, module, cases_file],
        cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
    out, err, ended = _collect(proc, timeout)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
    end_descendants()
    if ended is None:
        ended = "exited with %d" % proc.returncode if proc.returncode >= 0 \
            else "killed by signal %d" % -proc.returncode
    shutil.rmtree(scratch, ignore_errors=True)
    lines = []
    for line in out.decode("utf-8", errors="replace").splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append(None)
    return lines, err.decode("utf-8", errors="replace")[-1500:], ended


def _collect(proc, timeout):
    selector = selectors.DefaultSelector()
    buffers = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    for stream in buffers:
        selector.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    ended = None
    while selector.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            ended = "timed out after %d s" % timeout
            break
        for key, _ in selector.select(left):
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                continue
            buffers[key.fileobj] += chunk
            if len(buffers[key.fileobj]) > OUTPUT_LIMIT:
                ended = "printed more than %d bytes" % OUTPUT_LIMIT
                selector.close()
                return bytes(buffers[proc.stdout]), bytes(buffers[proc.stderr]), ended
    selector.close()
    return bytes(buffers[proc.stdout]), bytes(buffers[proc.stderr]), ended


def end_descendants():
    """Kills and reaps every process below this one (all of them are its
    children once orphaned, as it is a subreaper), until none is left."""
    me = os.getpid()
    for _ in range(1000):
        children = _children(me)
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
    raise SystemExit("processes started by the agent's code could not all be ended")


def _children(parent):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent:
            found.append(int(entry))
    return found


def write_reward(logs, name, text):
    for stale in REWARD_FILES:
        path = os.path.join(logs, stale)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    fd, temporary = tempfile.mkstemp(dir=logs, prefix=".reward-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, os.path.join(logs, name))
