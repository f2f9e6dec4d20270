# SPDX-License-Identifier: MIT
"""emulator.py - runs the build's target programs through the cross build's
emulator (CMAKE_CROSSCOMPILING_EMULATOR, e.g. qemu-aarch64 -L <sysroot>).

tests/CMakeLists.txt gives every test FDR_TEST_EMULATOR, the emulator's
command line, in a cross build. Importing this module (fdrtest.py and
session_helpers.py do) makes every subprocess.Popen (so subprocess.run
too) whose program is an ELF file of another machine start under that
emulator, so a driver runs the same argv natively and cross. Scripts,
python3 and the host's tools (babeltrace2) start as they are. Without the
variable it changes nothing."""
import os
import shlex
import shutil
import subprocess

_EMULATOR = shlex.split(os.environ.get("FDR_TEST_EMULATOR", ""))


def _machine(path):
    """The ELF e_machine of path, or None when it is not an ELF file."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    return int.from_bytes(h[18:20], "little" if h[5] == 1 else "big")


_HOST = _machine("/proc/self/exe")


def foreign(argv0):
    """True when argv0 is a program that this machine cannot exec itself."""
    path = argv0 if "/" in argv0 else shutil.which(argv0)
    m = _machine(path) if path else None
    return m is not None and m != _HOST


if _EMULATOR:
    class _Popen(subprocess.Popen):
        def __init__(self, args, *a, **kw):
            if isinstance(args, (list, tuple)) and args and not kw.get("shell") and \
                    foreign(os.fspath(args[0])):
                args = _EMULATOR + list(args)
            super().__init__(args, *a, **kw)

    subprocess.Popen = _Popen
