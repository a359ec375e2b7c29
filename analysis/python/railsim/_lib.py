"""librailsim through ctypes: where the shared library is, and the few
functions of include/railsim/run.h that railsim.run needs.

The library is loaded once, at the first run, never at import. Only
functions the headers mark RS_API are called; scenarios and results stay
opaque handles and a result comes back as its summary's JSON text, so the
only C layouts mirrored here are rs_err (base.h) and rs_run_opts (run.h).
tests/e2e/python.sh compares both with what the C compiler makes of the
installed headers: a member added to either fails there first.

Where the library is looked for, first found wins (docs/python.md):
  1. $RAILSIM_LIB (the file, or a directory holding librailsim.so.0);
     when set, nothing else is tried;
  2. installed: the libdir _where.py names relative to this package
     (written by `cmake --install`), then PREFIX/lib, PREFIX/lib/<multiarch>
     and PREFIX/lib64 when the package is PREFIX/lib/python3/dist-packages/railsim;
  3. the source tree's build directory (make build) when the package is
     analysis/python/railsim of a checkout;
  4. the dynamic loader's own search (ctypes.util.find_library).
"""
import ctypes
import ctypes.util
import os
import threading

from ._run import LibraryNotFound

SONAME = "librailsim.so.0"

# include/railsim/base.h
RS_OK = 0
RS_EINVAL = -1
RS_ENOMEM = -2
RS_EIO = -3
RS_EINCOMPLETE = -8
RS_EINTR = -9


class Err(ctypes.Structure):
    """rs_err (base.h): the caller-owned one-sentence message buffer."""
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]

    def text(self):
        return self.msg.decode("utf-8", "replace")


# rs_run_progress_fn(void *ctx, rs_time now, uint64_t events, double done)
PROGRESS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                               ctypes.c_double)


class RunOpts(ctypes.Structure):
    """rs_run_opts (run.h), filled by rs_run_opts_init with its own size
    before use: a library with a larger rs_run_opts reads only these
    fields (docs/library.md, "Versioned structs")."""
    _fields_ = [("size", ctypes.c_uint32), ("outdir", ctypes.c_char_p), ("name", ctypes.c_char_p), ("force", ctypes.c_int),
                ("progress", PROGRESS_FN), ("ctx", ctypes.c_void_p), ("part", ctypes.c_void_p),
                ("flags", ctypes.c_uint)]


_lock = threading.Lock()
_lib = None
path = None  # the file loaded, once loaded


def _installed(here):
    out = []
    try:
        from . import _where
        if _where.LIBDIR:
            out.append(os.path.join(here, _where.LIBDIR, SONAME))
    except ImportError:  # the source tree has none
        pass
    parts = here.split(os.sep)
    if parts[-4:-1] == ["lib", "python3", "dist-packages"]:
        prefix = os.sep.join(parts[:-4]) or os.sep
        import sysconfig
        arch = sysconfig.get_config_var("MULTIARCH")
        for d in ["lib"] + (["lib/" + arch] if arch else []) + ["lib64"]:
            out.append(os.path.join(prefix, d, SONAME))
    return out


def candidates():
    """The paths tried, in order (the loader's own search comes after)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("RAILSIM_LIB")
    if env:
        return [os.path.join(env, SONAME) if os.path.isdir(env) else env]
    out = _installed(here)
    src = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(src, "include", "railsim", "run.h")):
        out.append(os.path.join(src, "build", "lib", SONAME))
    seen = []
    for p in out:
        p = os.path.normpath(p)
        if p not in seen:
            seen.append(p)
    return seen


def _declare(lib):
    c_int, c_char_p, c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
    err_p, handle_p = ctypes.POINTER(Err), ctypes.POINTER(c_void_p)
    sets = ctypes.POINTER(c_char_p)
    protos = {
        "rs_strerror": (c_char_p, [c_int]),
        "rs_scenario_create": (c_int, [handle_p, err_p]),
        "rs_scenario_destroy": (None, [c_void_p]),
        "rs_scenario_load": (c_int, [c_void_p, c_char_p, sets, c_int, err_p]),
        "rs_scenario_load_string": (c_int, [c_void_p, c_char_p, sets, c_int, err_p]),
        "rs_run_opts_init": (None, [ctypes.POINTER(RunOpts), ctypes.c_size_t]),
        "rs_run_with": (c_int, [c_void_p, ctypes.POINTER(RunOpts), handle_p, err_p]),
        "rs_result_destroy": (None, [c_void_p]),
        "rs_result_status": (c_int, [c_void_p]),
        "rs_result_message": (c_char_p, [c_void_p]),
        "rs_result_warning": (c_char_p, [c_void_p]),
        "rs_result_stopped_by_faults": (c_int, [c_void_p]),
        "rs_result_summary_json": (c_char_p, [c_void_p]),
    }
    for name, (res, args) in protos.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


def load():
    """The loaded library (a ctypes.CDLL with its prototypes declared),
    loading it on the first call. Raises LibraryNotFound, or OSError with
    the loader's reason for a file found that does not load."""
    global _lib, path
    with _lock:
        if _lib is not None:
            return _lib
        tried = candidates()
        env = os.environ.get("RAILSIM_LIB")
        for p in tried:
            if os.path.exists(p) or env:
                try:
                    lib = ctypes.CDLL(p)
                except OSError as e:
                    # The loader's message names the file and why.
                    raise OSError("railsim: cannot load librailsim%s: %s" % (" (RAILSIM_LIB)" if env else "", e)) \
                        from None
                _lib, path = _declare(lib), p
                return _lib
        name = ctypes.util.find_library("railsim")
        if name:
            _lib, path = _declare(ctypes.CDLL(name)), name
            return _lib
        raise LibraryNotFound("railsim: %s not found in %s, nor by the dynamic loader; install railsim "
                              "(cmake --install) or set RAILSIM_LIB to the library"
                              % (SONAME, ", ".join(tried) or "no candidate place"))
