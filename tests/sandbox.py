"""A throwaway Linux sandbox in which the peer corpus's commands really run.

The corpus holds commands such as ``rm -rf /``, ``rm -rf ~`` and ``sudo git push --force``;
the oracle (tests/oracle.py) must run each one for real to see what it destroys. Each run
gets new user, mount, network and pid namespaces (``unshare``, util-linux): the host's
``/usr``, ``/etc`` and ``/opt`` and the Python installation that runs branchkeeper are mounted
read-only; ``/dev`` holds only ``null``, ``zero``, ``full``, ``random`` and ``urandom``; the
only writable places are a fresh tmpfs root and one copy of a *world* (its ``home/``, ``srv/``
and ``tmp/`` are mounted at ``/home``, ``/srv`` and ``/tmp``); there is no network; every
process left behind dies with the namespace. So a command that deletes everything deletes
the world copy and nothing else, and the world's paths are the same in every run.

Linux only. :func:`available` says whether this machine can build one.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Where the oracle's own scripts are mounted (read-only) inside the sandbox.
ORACLE_DIR = "/oracle"
#: Directories of a world, mounted at the same names under ``/``.
WORLD_DIRS = ("home", "srv", "tmp")

# The setup runs as root of a new user namespace (pid 1 of a new pid namespace) and ends by
# exec'ing chroot. Arguments: root dir, scratch dir, world dir, copy (1: copy the world into a
# private tmpfs on the scratch dir; 0: mount it in place), oracle dir, read-only extras, "--",
# then the command (an env -i ... argv). The root is made read-only once it is laid out, so
# a command that deletes everything cannot take /bin or /dev/null from the checker after it.
# Every tmpfs has a size limit, so a command that writes without end (dd) fills the world
# copy, not the machine's memory.
_SETUP = r"""
set -eu
R=$1; S=$2; W=$3; COPY=$4; O=$5; shift 5
mount -t tmpfs -o mode=755,size=16m bk-sandbox "$R"
mkdir -p "$R/dev/shm" "$R/proc" "$R/var/tmp" "$R/run" "$R/root" "$R/oracle"
for d in /dev/shm /var/tmp /run /root; do mount -t tmpfs -o mode=1777,size=64m bk-tmp "$R$d"; done
ro() { mkdir -p "$R$1"; mount --rbind "$1" "$R$1"; mount -o remount,bind,ro "$R$1"; }
for d in /usr /etc /opt; do [ -d "$d" ] && ro "$d"; done
for l in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$R/$l"; elif [ -d "/$l" ]; then ro "/$l"; fi
done
for n in null zero full random urandom; do
  : > "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"
done
ln -s /proc/self/fd "$R/dev/fd"; ln -s fd/0 "$R/dev/stdin"; ln -s fd/1 "$R/dev/stdout"
ln -s fd/2 "$R/dev/stderr"
mount -t proc proc "$R/proc"
if [ "$COPY" = 1 ]; then
  mount -t tmpfs -o mode=755,size=256m bk-world "$S"; cp -a "$W/." "$S/"; W=$S
fi
for d in home srv tmp; do mkdir -p "$R/$d" "$W/$d"; mount --bind "$W/$d" "$R/$d"; done
# The read-only extras (the interpreter, the venv, the source) go on top of the world, so a
# checkout under /tmp or /home stays visible inside.
while [ "$1" != "--" ]; do ro "$1"; shift; done; shift
mount --bind "$O" "$R/oracle"; mount -o remount,bind,ro "$R/oracle"
mount -o remount,ro "$R"
exec chroot "$R" "$@"
"""

#: The environment every sandboxed process starts from (nothing of the host's leaks in).
BASE_ENV: Mapping[str, str] = {
    "HOME": "/home/agent", "USER": "agent", "LOGNAME": "agent", "SHELL": "/bin/bash",
    "PATH": f"{ORACLE_DIR}/shims:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
    "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "false",
    "GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
    "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com",
    "GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000",
    "PYTHONDONTWRITEBYTECODE": "1", "PARALLEL_HOME": "/tmp/.parallel",
}


def _python_mounts() -> list[str]:
    """Host paths the sandboxed Python needs (the interpreter, the venv, the source of
    branchkeeper), read-only at the same paths."""
    import branchkeeper

    src = Path(branchkeeper.__file__).resolve().parent.parent
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), str(src)}
    # the directory of the tests package (the oracle scripts import nothing from it, but the
    # editable install may point here)
    return sorted(p for p in paths if not p.startswith(("/usr", "/etc", "/opt")))


@functools.cache
def available() -> str | None:
    """None when this machine can build the sandbox, else why not (one line)."""
    if not sys.platform.startswith("linux"):
        return "the sandbox needs Linux namespaces"
    try:
        res = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--net",
                              "--pid", "--fork", "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare cannot run: {exc}"
    if res.returncode != 0:
        return "unshare refused: " + res.stderr.decode(errors="replace").strip()[:200]
    return None


def run(world: Path, argv: Sequence[str], *, oracle_dir: Path, scratch: Path,
        copy: bool = False, env: Mapping[str, str] | None = None, cwd: str = "/home/agent",
        timeout: float = 120.0, stdin: bytes = b"", read_only: Sequence[str] = ()
        ) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` inside a sandbox over ``world`` (a directory holding ``home/``, ``srv/``,
    ``tmp/``) with ``oracle_dir`` at :data:`ORACLE_DIR`, in ``cwd``, with :data:`BASE_ENV`
    plus ``env``; ``read_only``: more host paths mounted read-only at the same paths. ``copy``:
    the sandbox works on a copy of the world in memory, gone when it
    ends (else on ``world`` itself). ``scratch``: a directory for the sandbox's mount points
    (left empty). Returns the finished process (its output captured); raises
    subprocess.TimeoutExpired."""
    for d in WORLD_DIRS:
        (world / d).mkdir(parents=True, exist_ok=True)
    root, copy_dir = scratch / "root", scratch / "world"
    root.mkdir(parents=True, exist_ok=True)
    copy_dir.mkdir(parents=True, exist_ok=True)
    full_env = {**BASE_ENV, **(env or {})}
    inner = ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in full_env.items()),
             "/bin/sh", "-c", 'cd "$0" && exec "$@"', cwd, *argv]
    cmd = ["unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--fork",
           "--kill-child", "--propagation", "private", "/bin/sh", "-c", _SETUP, "setup",
           str(root), str(copy_dir), str(world), "1" if copy else "0", str(oracle_dir),
           *sorted({*_python_mounts(), *read_only}), "--", *inner]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout)
