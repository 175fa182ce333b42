/*
 * rules.c — the source policy's rules, one row each, as data a reviewer can
 * read top to bottom (docs/production.md explains every id with an example).
 *
 * A row names its rule id, the frameworks it applies to, what kind of fact it
 * matches (an imported module, a builtin, an attribute, a string, a header, a
 * C identifier...) and the pattern. The first matching row wins, so specific
 * rows come before general ones (torch.cuda.Event is a timer before it is
 * PyTorch). PK_CODE rows are checked in scan_python.c / scan_c.c / check.c
 * (requirements and structure); they are listed here so that the table is the
 * complete list of ids.
 *
 * Why a static table rather than a data file: the policy is part of the judge,
 * so it is pinned with the binary; a rules file beside the campaign would be
 * one more thing an agent could try to reach, and a missing file would have to
 * fail closed anyway.
 */
#include "policy/internal.h"

#include <ctype.h>
#include <string.h>

#define PY      FW_PY
#define C       FW_C
#define ALL     FW_ALL
#define NOT(x)  (FW_ALL & ~(x))
#define TRITONS (FW(AKA_FW_TRITON) | FW(AKA_FW_GLUON))

static const struct pol_rule rules[] = {
    /* ---- what each framework requires (checked in code) ---- */
    {"requires-kernel", ALL, PK_CODE, "", "no kernel of the chosen framework is defined"},
    {"requires-launch", ALL, PK_CODE, "",
     "no kernel of the chosen framework is launched from the entry point"},
    {"requires-entry", C, PK_CODE, "", "no aka_kernel entry point is defined"},
    /* ---- structure (upstream's deterministic checks) ---- */
    {"relative-import", PY, PK_CODE, "", "relative import (the kernel is one self-contained file)"},
    {"one-kernel-file", ALL, PK_CODE, "", "the kernel uses a second source file of its directory"},
    {"solution-json", ALL, PK_CODE, "", "solution.json is not consistent with the one kernel file"},
    {"gluon-latch", FW(AKA_FW_GLUON), PK_CODE, "",
     "a Gluon kernel must import Gluon (switching back is forbidden)"},
    {"gluon-latch", FW(AKA_FW_TRITON), PK_PY_MODULE, "triton.experimental.gluon",
     "a Triton kernel must not import Gluon (it would disarm the conversion latch)"},

    /* ---- dynamic access: what no static check can follow ---- */
    {"dynamic-access", PY, PK_CODE, "getattr", "getattr with a computed attribute name"},
    {"dynamic-access", PY, PK_CODE, "*", "star import (the names it binds cannot be followed)"},
    {"dynamic-access", PY, PK_CODE, "non-ascii",
     "identifier outside ASCII (Python folds it to another name)"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "__import__", "dynamic import"},
    {"dynamic-access", PY, PK_PY_MODULE, "importlib", "dynamic import"},
    {"dynamic-access", PY, PK_PY_MODULE, "imp", "dynamic import"},
    {"dynamic-access", PY, PK_PY_MODULE, "pkgutil", "dynamic import"},
    {"dynamic-access", PY, PK_PY_MODULE, "runpy", "dynamic import"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "exec", "code built at run time"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "eval", "code built at run time"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "compile", "code built at run time"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "globals", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "vars", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "locals", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_BUILTIN, "__builtins__", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_MODULE, "builtins", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_MODULE, "sys.modules", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_MODULE, "sys._getframe", "frame access"},
    {"dynamic-access", PY, PK_PY_MODULE, "inspect", "frame and source access"},
    {"dynamic-access", PY, PK_PY_MODULE, "gc", "object-graph access"},
    {"dynamic-access", PY, PK_PY_MODULE, "types", "code and function objects built at run time"},
    {"dynamic-access", PY, PK_PY_MODULE, "marshal", "code loaded at run time"},
    {"dynamic-access", PY, PK_PY_MODULE, "pickle", "code loaded at run time"},
    {"dynamic-access", PY, PK_PY_MODULE, "operator.attrgetter", "attribute access by name"},
    {"dynamic-access", PY, PK_PY_MODULE, "operator.methodcaller", "attribute access by name"},
    {"dynamic-access", PY, PK_PY_MODULE, "ctypes",
     "foreign-function access (a library behind ctypes)"},
    {"dynamic-access", PY, PK_PY_MODULE, "cffi", "foreign-function access"},
    {"dynamic-access", PY, PK_PY_MODULE, "torch.ops", "a registered operator called by name"},
    {"dynamic-access", PY, PK_PY_MODULE, "torch.library", "an operator registered at run time"},
    {"dynamic-access", PY, PK_PY_MODULE, "torch.utils.cpp_extension",
     "a C++/CUDA extension built at run time"},
    {"dynamic-access", PY, PK_PY_MODULE, "torch._C", "PyTorch internals"},
    {"dynamic-access", PY, PK_PY_MODULE, "torch.classes", "a registered class called by name"},
    {"dynamic-access", PY, PK_PY_ATTR, "load_inline", "an extension built at run time"},
    {"dynamic-access", PY, PK_PY_ATTR, "__dict__", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_ATTR, "__getattribute__", "attribute access by name"},
    {"dynamic-access", PY, PK_PY_ATTR, "__globals__", "namespace access by name"},
    {"dynamic-access", PY, PK_PY_ATTR, "__subclasses__", "object-graph access"},
    {"dynamic-access", PY, PK_PY_ATTR, "__code__", "code objects"},
    {"dynamic-access", PY, PK_PY_ATTR, "__closure__", "closure cells"},
    {"dynamic-access", PY, PK_PY_ATTR, "__builtins__", "namespace access by name"},
    {"dynamic-access", ALL, PK_PY_MODULE, "cuda.bindings.driver.cuModuleLoad*",
     "a prebuilt module loaded at run time"},
    {"dynamic-access", ALL, PK_PY_MODULE, "cuda.bindings.driver.cuLibraryLoad*",
     "a prebuilt library loaded at run time"},
    {"dynamic-access", C, PK_CODE, "##",
     "token pasting (it can assemble names the policy never sees)"},
    {"dynamic-access", C, PK_CODE, "#include MACRO", "computed #include"},
    {"dynamic-access", FW(AKA_FW_NATIVE_C), PK_C_IDENT, "asm",
     "inline assembly (system calls and timers without names)"},
    {"dynamic-access", FW(AKA_FW_NATIVE_C), PK_C_IDENT, "__asm__",
     "inline assembly (system calls and timers without names)"},
    {"dynamic-access", FW(AKA_FW_NATIVE_C), PK_C_IDENT, "__asm",
     "inline assembly (system calls and timers without names)"},
    {"dynamic-access", C, PK_C_INCLUDE, "dlfcn.h", "dynamic loading"},
    {"dynamic-access", C, PK_C_IDENT, "dlopen", "dynamic loading"},
    {"dynamic-access", C, PK_C_IDENT, "dlmopen", "dynamic loading"},
    {"dynamic-access", C, PK_C_IDENT, "dlsym", "dynamic loading"},
    {"dynamic-access", C, PK_C_IDENT, "dlvsym", "dynamic loading"},
    {"dynamic-access", C, PK_C_IDENT, "cuModuleLoad*", "a prebuilt module loaded at run time"},
    {"dynamic-access", C, PK_C_IDENT, "cuLibraryLoad*", "a prebuilt library loaded at run time"},
    {"dynamic-access", C, PK_C_IDENT, "cudaLibraryLoad*", "a prebuilt library loaded at run time"},
    {"dynamic-access", C, PK_C_INCLUDE, "nvrtc", "code compiled at run time"},
    {"dynamic-access", C, PK_C_IDENT, "nvrtc*", "code compiled at run time"},

    /* ---- reading the evaluator's files ---- */
    {"evaluator-files", PY, PK_PY_MODULE, "reference", "the evaluator's reference imported"},
    {"evaluator-files", PY, PK_PY_MODULE, "input", "the evaluator's input generator imported"},
    {"evaluator-files", PY, PK_PY_MODULE, "valid", "the evaluator's validator imported"},
    {"evaluator-files", PY, PK_PY_MODULE, "test_kernel", "the evaluator imported"},
    {"evaluator-files", ALL, PK_STRING, "plan.json", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "reference.py", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "reference.c", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "shapes.json", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "workload", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "definition.json", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "metadata.json", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "roofline.json", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "agent_problem.json", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "input.py", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "valid.py", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "test_kernel.py", "an evaluator file named"},
    {"evaluator-files", ALL, PK_STRING, "/proc/", "process state of the evaluator"},
    {"evaluator-files", ALL, PK_STRING, "ATREX_", "the supervisor's environment"},
    {"evaluator-files", ALL, PK_STRING, "AKA_", "the supervisor's environment"},
    {"evaluator-files", PY, PK_PY_BUILTIN, "__file__",
     "the kernel's own path (to find the evaluator's files)"},

    /* ---- timers and harness patching ---- */
    {"timer", PY, PK_PY_MODULE, "time", "a clock read or patched by the kernel"},
    {"timer", PY, PK_PY_MODULE, "timeit", "a clock read or patched by the kernel"},
    {"timer", PY, PK_PY_MODULE, "torch.cuda.Event", "CUDA events (the harness's timer)"},
    {"timer", PY, PK_PY_MODULE, "torch.cuda.Event.elapsed_time",
     "CUDA events (the harness's timer)"},
    {"timer", PY, PK_PY_MODULE, "torch.profiler", "the profiler"},
    {"timer", PY, PK_PY_MODULE, "torch.autograd.profiler", "the profiler"},
    {"timer", PY, PK_PY_MODULE, "triton.testing", "Triton's benchmarking helpers"},
    {"timer", C, PK_C_IDENT, "clock_gettime", "a clock read by the kernel"},
    {"timer", C, PK_C_IDENT, "gettimeofday", "a clock read by the kernel"},
    {"timer", C, PK_C_IDENT, "timespec_get", "a clock read by the kernel"},
    {"timer", C, PK_C_IDENT, "__rdtsc", "the time-stamp counter"},
    {"timer", C, PK_C_IDENT, "__rdtscp", "the time-stamp counter"},
    {"timer", C, PK_C_IDENT, "__builtin_ia32_rdtsc", "the time-stamp counter"},
    {"timer", C, PK_C_IDENT, "__builtin_ia32_rdtscp", "the time-stamp counter"},
    {"timer", C, PK_C_IDENT, "__builtin_readcyclecounter", "the cycle counter"},
    {"timer", C, PK_STRING, "rdtsc", "the time-stamp counter"},
    {"timer", C, PK_C_CALL, "clock", "a clock read by the kernel"},
    {"timer", C, PK_C_CALL, "time", "a clock read by the kernel"},
    {"timer", C, PK_C_INCLUDE, "chrono", "a clock read by the kernel"},
    {"timer", C, PK_C_IDENT, "chrono", "a clock read by the kernel (std::chrono)"},
    {"timer", C, PK_C_IDENT, "cudaEvent*", "CUDA events (the harness's timer)"},
    {"timer", C, PK_C_IDENT, "cudaProfiler*", "the profiler"},
    {"timer", C, PK_C_IDENT, "cuEvent*", "CUDA events (the harness's timer)"},
    {"harness-patching", ALL, PK_CODE,
     "module.attr =", "assignment to an attribute of an imported module"},
    {"harness-patching", PY, PK_PY_BUILTIN, "setattr", "attribute assignment by name"},
    {"harness-patching", PY, PK_PY_BUILTIN, "delattr", "attribute deletion by name"},
    {"harness-patching", ALL, PK_PY_MODULE, "aka_harness", "the harness imported"},
    {"harness-patching", PY, PK_PY_MODULE, "harness", "the harness imported"},
    {"harness-patching", PY, PK_PY_MODULE, "sys.settrace", "a trace hook"},
    {"harness-patching", PY, PK_PY_MODULE, "sys.setprofile", "a profile hook"},
    {"harness-patching", PY, PK_PY_MODULE, "sys.stdout",
     "output that could forge the harness's lines"},
    {"harness-patching", PY, PK_PY_MODULE, "sys.stderr",
     "output that could forge the harness's lines"},
    {"harness-patching", PY, PK_PY_MODULE, "sys.exit", "ending the evaluator's process"},
    {"harness-patching", PY, PK_PY_MODULE, "signal", "signal handlers in the evaluator's process"},
    {"harness-patching", PY, PK_PY_MODULE, "atexit", "exit hooks in the evaluator's process"},
    {"harness-patching", PY, PK_PY_MODULE, "threading",
     "a background thread in the evaluator's process"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.manual_seed", "the evaluator's random state"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.seed", "the evaluator's random state"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.set_rng_state", "the evaluator's random state"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.random", "the evaluator's random state"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.cuda.manual_seed*",
     "the evaluator's random state"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.cuda.set_rng_state*",
     "the evaluator's random state"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.backends",
     "global numerics flags the reference runs under"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.set_default_*",
     "global defaults the reference runs under"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.set_float32_matmul_precision",
     "global numerics flags the reference runs under"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.set_flush_denormal",
     "global numerics flags the reference runs under"},
    {"harness-patching", PY, PK_PY_MODULE, "torch.cuda.synchronize",
     "synchronization the harness times around"},
    {"harness-patching", PY, PK_PY_BUILTIN_CALL, "print",
     "output that could forge the harness's lines"},
    {"harness-patching", C, PK_C_IDENT, "aka_harness*", "the harness's symbols"},
    {"harness-patching", C, PK_C_IDENT, "hp_*", "the harness's symbols"},
    {"harness-patching", C, PK_C_IDENT, "constructor", "code run at load time, before the harness"},
    {"harness-patching", C, PK_C_IDENT, "destructor", "code run at unload time, after the harness"},
    {"harness-patching", C, PK_C_IDENT, "ifunc", "a resolver run at load time, before the harness"},
    {"harness-patching", C, PK_C_INCLUDE, "thread",
     "a background thread in the evaluator's process"},
    {"harness-patching", C, PK_C_IDENT, "jthread",
     "a background thread in the evaluator's process"},
    {"harness-patching", C, PK_STRING, ".init_array", "code run at load time, before the harness"},
    {"harness-patching", C, PK_STRING, ".fini_array", "code run at unload time"},
    {"harness-patching", C, PK_STRING, ".preinit_array",
     "code run at load time, before the harness"},
    {"harness-patching", C, PK_C_DEFINE, "main", "a symbol of the harness redefined"},
    {"harness-patching", C, PK_C_DEFINE, "clock_gettime", "a timer redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "gettimeofday", "a timer redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "cudaStreamSynchronize",
     "a CUDA call redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "cudaDeviceSynchronize",
     "a CUDA call redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "cudaLaunchKernel", "a CUDA call redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "memcmp", "a libc call redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "memcpy", "a libc call redefined (interposed)"},
    {"harness-patching", C, PK_C_DEFINE, "strtod", "a libc call redefined (interposed)"},
    {"harness-patching", C, PK_C_IDENT, "setenv", "the evaluator's environment changed"},
    {"harness-patching", C, PK_C_IDENT, "putenv", "the evaluator's environment changed"},
    {"harness-patching", C, PK_C_IDENT, "unsetenv", "the evaluator's environment changed"},
    {"harness-patching", C, PK_C_IDENT, "cudaDeviceReset", "the evaluator's device state changed"},
    {"harness-patching", C, PK_C_IDENT, "cudaSetDevice", "the evaluator's device state changed"},
    {"harness-patching", C, PK_C_IDENT, "signal", "signal handlers in the evaluator's process"},
    {"harness-patching", C, PK_C_IDENT, "sigaction", "signal handlers in the evaluator's process"},
    {"harness-patching", C, PK_C_IDENT, "atexit", "exit hooks in the evaluator's process"},
    {"harness-patching", C, PK_C_IDENT, "exit", "ending the evaluator's process"},
    {"harness-patching", C, PK_C_IDENT, "_exit", "ending the evaluator's process"},
    {"harness-patching", C, PK_C_IDENT, "abort", "ending the evaluator's process"},
    {"harness-patching", C, PK_C_CALL, "printf", "output that could forge the harness's lines"},
    {"harness-patching", FW(AKA_FW_NATIVE_C), PK_C_CALL, "fprintf",
     "output that could forge the harness's lines"},
    {"harness-patching", FW(AKA_FW_NATIVE_C), PK_C_CALL, "puts",
     "output that could forge the harness's lines"},
    {"harness-patching", C, PK_C_CALL, "fputs", "output that could forge the harness's lines"},
    {"harness-patching", C, PK_C_CALL, "putchar", "output that could forge the harness's lines"},
    {"harness-patching", C, PK_C_CALL, "fwrite", "output that could forge the harness's lines"},
    {"harness-patching", C, PK_C_CALL, "write", "output that could forge the harness's lines"},
    {"harness-patching", C, PK_C_CALL, "dprintf", "output that could forge the harness's lines"},

    /* ---- caches keyed on inputs ---- */
    {"input-cache", PY, PK_PY_ATTR, "data_ptr", "an input identified by its address"},
    {"input-cache", PY, PK_PY_ATTR, "untyped_storage", "an input identified by its storage"},
    {"input-cache", PY, PK_PY_ATTR, "storage", "an input identified by its storage"},
    {"input-cache", PY, PK_PY_ATTR, "_cdata", "an input identified by its address"},
    {"input-cache", PY, PK_PY_ATTR, "_version", "an input identified by its version counter"},
    {"input-cache", PY, PK_PY_BUILTIN_CALL, "id", "an input identified by its address"},
    {"input-cache", PY, PK_PY_BUILTIN_CALL, "hash", "an input identified by its hash"},
    {"input-cache", PY, PK_PY_MODULE, "functools.lru_cache", "a memoized function"},
    {"input-cache", PY, PK_PY_MODULE, "functools.cache", "a memoized function"},
    {"input-cache", PY, PK_PY_MODULE, "functools.cached_property", "a memoized property"},
    {"input-cache", PY, PK_PY_MODULE, "weakref", "an input tracked across calls"},
    {"input-cache", PY, PK_CODE, "global", "module-level state written on the forward path"},
    {"input-cache", PY, PK_CODE,
     "CACHE[key] =", "a module-level container filled on the forward path"},
    {"input-cache", C, PK_CODE,
     "inputs[i].data ==", "an input pointer compared (an output cache keyed on addresses)"},
    {"input-cache", C, PK_C_CALL, "memcmp",
     "input contents compared (an output cache keyed on data)"},

    /* ---- processes, network, files ---- */
    {"process", PY, PK_PY_MODULE, "subprocess", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.system", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.popen", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.exec*", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.spawn*", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.fork*", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.posix_spawn*", "a child process"},
    {"process", PY, PK_PY_MODULE, "os.kill*", "a signal to a process"},
    {"process", PY, PK_PY_MODULE, "pty", "a child process"},
    {"process", PY, PK_PY_MODULE, "multiprocessing", "a child process"},
    {"process", PY, PK_PY_MODULE, "concurrent", "a child process or thread"},
    {"process", C, PK_C_IDENT, "system", "a child process"},
    {"process", C, PK_C_IDENT, "popen", "a child process"},
    {"process", C, PK_C_IDENT, "fork", "a child process"},
    {"process", C, PK_C_IDENT, "vfork", "a child process"},
    {"process", C, PK_C_IDENT, "clone", "a child process"},
    {"process", C, PK_C_IDENT, "execv*", "a child process"},
    {"process", C, PK_C_IDENT, "execl*", "a child process"},
    {"process", C, PK_C_IDENT, "execve", "a child process"},
    {"process", C, PK_C_IDENT, "posix_spawn*", "a child process"},
    {"process", C, PK_C_IDENT, "kill", "a signal to a process"},
    {"process", C, PK_C_IDENT, "ptrace", "another process traced"},
    {"process", C, PK_C_IDENT, "syscall", "a raw system call"},
    {"process", C, PK_C_INCLUDE, "sys/syscall.h", "raw system calls"},
    {"process", C, PK_STRING, "syscall", "a raw system call"},
    {"process", C, PK_STRING, "sysenter", "a raw system call"},
    {"process", C, PK_STRING, "int $0x80", "a raw system call"},
    {"network", PY, PK_PY_MODULE, "socket", "network access"},
    {"network", PY, PK_PY_MODULE, "ssl", "network access"},
    {"network", PY, PK_PY_MODULE, "urllib", "network access"},
    {"network", PY, PK_PY_MODULE, "urllib3", "network access"},
    {"network", PY, PK_PY_MODULE, "requests", "network access"},
    {"network", PY, PK_PY_MODULE, "http", "network access"},
    {"network", PY, PK_PY_MODULE, "httpx", "network access"},
    {"network", PY, PK_PY_MODULE, "aiohttp", "network access"},
    {"network", PY, PK_PY_MODULE, "ftplib", "network access"},
    {"network", PY, PK_PY_MODULE, "smtplib", "network access"},
    {"network", PY, PK_PY_MODULE, "xmlrpc", "network access"},
    {"network", PY, PK_PY_MODULE, "websocket*", "network access"},
    {"network", PY, PK_PY_MODULE, "zmq", "network access"},
    {"network", PY, PK_PY_MODULE, "asyncio", "network and process access"},
    {"network", C, PK_C_INCLUDE, "sys/socket.h", "network access"},
    {"network", C, PK_C_INCLUDE, "netinet/", "network access"},
    {"network", C, PK_C_INCLUDE, "arpa/", "network access"},
    {"network", C, PK_C_INCLUDE, "netdb.h", "network access"},
    {"network", C, PK_C_INCLUDE, "curl/", "network access"},
    {"network", C, PK_C_IDENT, "socket", "network access"},
    {"network", C, PK_C_IDENT, "connect", "network access"},
    {"network", C, PK_C_IDENT, "getaddrinfo", "network access"},
    {"network", C, PK_C_IDENT, "curl_*", "network access"},
    {"file-access", PY, PK_PY_BUILTIN_CALL, "open", "file access"},
    {"file-access", PY, PK_PY_MODULE, "os", "file and environment access"},
    {"file-access", PY, PK_PY_MODULE, "io", "file access"},
    {"file-access", PY, PK_PY_MODULE, "pathlib", "file access"},
    {"file-access", PY, PK_PY_MODULE, "shutil", "file access"},
    {"file-access", PY, PK_PY_MODULE, "tempfile", "file access"},
    {"file-access", PY, PK_PY_MODULE, "glob", "file access"},
    {"file-access", PY, PK_PY_MODULE, "fnmatch", "file access"},
    {"file-access", PY, PK_PY_MODULE, "mmap", "file access"},
    {"file-access", PY, PK_PY_MODULE, "fcntl", "file access"},
    {"file-access", PY, PK_PY_MODULE, "sqlite3", "file access"},
    {"file-access", PY, PK_PY_MODULE, "linecache", "file access"},
    {"file-access", PY, PK_PY_MODULE, "fileinput", "file access"},
    {"file-access", PY, PK_PY_MODULE, "sys", "interpreter state (sys.argv, sys.path, sys.modules)"},
    {"file-access", PY, PK_PY_MODULE, "torch.load", "file access"},
    {"file-access", PY, PK_PY_MODULE, "torch.save", "file access"},
    {"file-access", PY, PK_PY_MODULE, "numpy.load*", "file access"},
    {"file-access", PY, PK_PY_MODULE, "numpy.fromfile", "file access"},
    {"file-access", PY, PK_PY_MODULE, "numpy.save*", "file access"},
    {"file-access", C, PK_C_IDENT, "fopen*", "file access"},
    {"file-access", C, PK_C_IDENT, "freopen", "file access"},
    {"file-access", C, PK_C_IDENT, "fdopen", "file access"},
    {"file-access", C, PK_C_IDENT, "opendir", "file access"},
    {"file-access", C, PK_C_IDENT, "readlink", "file access"},
    {"file-access", C, PK_C_INCLUDE, "fstream", "file access"},
    {"file-access", C, PK_C_INCLUDE, "filesystem", "file access"},
    {"file-access", C, PK_C_IDENT, "ifstream", "file access"},
    {"file-access", C, PK_C_IDENT, "ofstream", "file access"},
    {"file-access", C, PK_C_IDENT, "fstream", "file access"},
    {"file-access", C, PK_C_IDENT, "filesystem", "file access"},
    {"file-access", C, PK_C_IDENT, "getenv", "the evaluator's environment read"},
    {"file-access", C, PK_C_IDENT, "secure_getenv", "the evaluator's environment read"},
    {"file-access", C, PK_C_IDENT, "environ", "the evaluator's environment read"},
    {"file-access", C, PK_C_CALL, "open", "file access"},
    {"file-access", C, PK_C_CALL, "open64", "file access"},
    {"file-access", C, PK_C_CALL, "openat", "file access"},
    {"file-access", C, PK_C_CALL, "creat", "file access"},
    {"file-access", C, PK_C_CALL, "read", "file access"},
    {"file-access", C, PK_C_CALL, "pread", "file access"},
    {"file-access", C, PK_C_CALL, "stat", "file access"},
    {"file-access", C, PK_C_CALL, "access", "file access"},
    {"file-access", C, PK_C_CALL, "unlink", "file access"},

    /* ---- prebuilt kernel libraries ---- */
    {"prebuilt-library", PY, PK_PY_MODULE, "triton.ops", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "triton_kernels", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "flashinfer", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "flash_attn", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "flash_attn_interface", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "flash_mla", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "deep_gemm", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "xformers", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "apex", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "liger_kernel", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "transformer_engine", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "bitsandbytes", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "fbgemm_gpu", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "vllm", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "sgl_kernel", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "deepspeed", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "torchao", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "aiter", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "quack", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "mamba_ssm", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "causal_conv1d", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "kernels", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "unsloth", "a prebuilt kernel library"},
    {"prebuilt-library", PY, PK_PY_MODULE, "cupy", "a prebuilt kernel library (cuBLAS, cuDNN)"},
    {"prebuilt-library", PY, PK_PY_MODULE, "nvidia",
     "a prebuilt kernel library (cuBLAS, cuDNN wheels)"},
    {"prebuilt-library", PY, PK_PY_MODULE, "cutlass.torch", "a prebuilt kernel library"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cublas", "a prebuilt kernel library (cuBLAS)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cudnn", "a prebuilt kernel library (cuDNN)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cufft", "a prebuilt kernel library (cuFFT)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cusparse", "a prebuilt kernel library (cuSPARSE)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cusolver", "a prebuilt kernel library (cuSOLVER)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cutlass/gemm/device/",
     "a prebuilt kernel (CUTLASS device GEMM)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cutlass/gemm/kernel/",
     "a prebuilt kernel (CUTLASS kernel GEMM)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cutlass/conv/device/",
     "a prebuilt kernel (CUTLASS convolution)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cutlass/library/",
     "a prebuilt kernel library (CUTLASS library)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "thrust/", "a prebuilt kernel library (Thrust)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cub/cub.cuh",
     "a prebuilt kernel library (CUB device-wide)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cub/device/",
     "a prebuilt kernel library (CUB device-wide)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "flashinfer", "a prebuilt kernel library"},
    {"prebuilt-library", C, PK_C_INCLUDE, "cblas.h", "a prebuilt kernel library (BLAS)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "mkl", "a prebuilt kernel library (MKL)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "openblas", "a prebuilt kernel library (OpenBLAS)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "lapack", "a prebuilt kernel library (LAPACK)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "Eigen/", "a prebuilt kernel library (Eigen)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "dnnl", "a prebuilt kernel library (oneDNN)"},
    {"prebuilt-library", C, PK_C_INCLUDE, "oneapi/", "a prebuilt kernel library (oneAPI)"},
    {"prebuilt-library", C, PK_C_IDENT, "cublas*", "a prebuilt kernel library (cuBLAS)"},
    {"prebuilt-library", C, PK_C_IDENT, "cudnn*", "a prebuilt kernel library (cuDNN)"},
    {"prebuilt-library", C, PK_C_IDENT, "cufft*", "a prebuilt kernel library (cuFFT)"},
    {"prebuilt-library", C, PK_C_IDENT, "cusparse*", "a prebuilt kernel library (cuSPARSE)"},
    {"prebuilt-library", C, PK_C_IDENT, "cusolver*", "a prebuilt kernel library (cuSOLVER)"},
    {"prebuilt-library", C, PK_C_IDENT, "cblas_*", "a prebuilt kernel library (BLAS)"},
    {"prebuilt-library", C, PK_C_IDENT, "sgemm_", "a prebuilt kernel library (BLAS)"},
    {"prebuilt-library", C, PK_C_IDENT, "dgemm_", "a prebuilt kernel library (BLAS)"},
    {"prebuilt-library", C, PK_C_IDENT, "mkl_*", "a prebuilt kernel library (MKL)"},
    {"prebuilt-library", C, PK_C_IDENT, "thrust", "a prebuilt kernel library (Thrust)"},
    {"prebuilt-library", C, PK_C_IDENT, "DeviceReduce",
     "a prebuilt kernel library (CUB device-wide)"},
    {"prebuilt-library", C, PK_C_IDENT, "DeviceScan",
     "a prebuilt kernel library (CUB device-wide)"},
    {"prebuilt-library", C, PK_C_IDENT, "DeviceRadixSort",
     "a prebuilt kernel library (CUB device-wide)"},
    {"prebuilt-library", C, PK_C_IDENT, "DeviceSegmentedReduce",
     "a prebuilt kernel library (CUB device-wide)"},

    /* ---- other frameworks than the chosen one ---- */
    {"other-framework", NOT(TRITONS), PK_PY_MODULE, "triton",
     "Triton in a kernel of another framework"},
    {"other-framework", NOT(FW(AKA_FW_CUTEDSL)), PK_PY_MODULE, "cutlass",
     "CuTe DSL in a kernel of another framework"},
    {"other-framework", NOT(FW(AKA_FW_TILELANG)), PK_PY_MODULE, "tilelang",
     "TileLang in a kernel of another framework"},
    {"other-framework", NOT(FW(AKA_FW_TILELANG)), PK_PY_MODULE, "tvm",
     "TVM in a kernel of another framework"},
    {"other-framework", NOT(FW(AKA_FW_FLYDSL)), PK_PY_MODULE, "flydsl",
     "FlyDSL in a kernel of another framework"},
    {"other-framework", NOT(FW(AKA_FW_CUTEDSL)), PK_PY_MODULE, "cuda",
     "CUDA Python in a kernel of another framework"},
    {"other-framework", PY, PK_PY_MODULE, "numba", "Numba in a production kernel"},
    {"other-framework", PY, PK_PY_MODULE, "pycuda", "PyCUDA in a production kernel"},
    {"other-framework", PY, PK_PY_MODULE, "jax", "JAX in a production kernel"},
    {"other-framework", PY, PK_PY_MODULE, "taichi", "Taichi in a production kernel"},
    {"other-framework", PY, PK_PY_MODULE, "warp", "NVIDIA Warp in a production kernel"},
    {"other-framework", PY, PK_PY_MODULE, "tensorflow", "TensorFlow in a production kernel"},
    {"other-framework", PY, PK_PY_MODULE, "hip", "HIP Python in a production kernel"},
    {"other-framework", FW(AKA_FW_NATIVE_C), PK_C_INCLUDE, "cuda", "CUDA in a native C kernel"},
    {"other-framework", FW(AKA_FW_NATIVE_C), PK_C_IDENT, "__global__", "CUDA in a native C kernel"},
    {"other-framework", C, PK_C_INCLUDE, "hip/", "HIP in a production kernel"},
    {"other-framework", C, PK_C_INCLUDE, "Python.h", "Python in a native kernel"},
    {"other-framework", C, PK_C_INCLUDE, "pybind11", "Python in a native kernel"},

    /* ---- PyTorch compute (specific rows above win) ---- */
    {"torch-compute", C, PK_C_INCLUDE, "torch/", "PyTorch in a native kernel"},
    {"torch-compute", C, PK_C_INCLUDE, "ATen/", "PyTorch in a native kernel"},
    {"torch-compute", C, PK_C_INCLUDE, "c10/", "PyTorch in a native kernel"},
    {"torch-compute", PY, PK_CODE, "torch.*",
     "PyTorch compute on the forward path (only allocation and metadata calls are allowed)"},
    {"torch-compute", PY, PK_CODE, "@", "the matrix-multiply operator outside a kernel"},
    {"torch-compute", PY, PK_PY_MODULE, "numpy", "NumPy compute in a GPU kernel"},
    {"torch-compute", PY, PK_PY_MODULE, "operator",
     "operator functions apply tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "__matmul__", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "__rmatmul__", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "__imatmul__", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_MODULE, "scipy", "SciPy compute in a GPU kernel"},
    {"torch-compute", PY, PK_PY_MODULE, "einops", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "matmul", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "mm", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "bmm", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "addmm", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "baddbmm", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "softmax", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "log_softmax", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "sum", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "mean", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "var", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "std", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "norm", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "exp", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "log", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "sqrt", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "rsqrt", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "pow", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "sigmoid", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "relu", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "gelu", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "silu", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "tanh", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "cumsum", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "amax", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "argmax", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "topk", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "sort", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "mul", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "mul_", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "add", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "add_", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "addcmul", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "lerp", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "masked_fill", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "index_select", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "gather", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "scatter", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "scatter_add", "tensor compute outside a kernel"},
    {"torch-compute", PY, PK_PY_METHOD, "cpu", "a copy to the host (outputs computed elsewhere)"},
    {"torch-compute", PY, PK_PY_METHOD, "numpy", "a copy to the host (outputs computed elsewhere)"},
    {"torch-compute", PY, PK_PY_METHOD, "tolist",
     "a copy to the host (outputs computed elsewhere)"},
    {"torch-compute", PY, PK_PY_METHOD, "tobytes",
     "a copy to the host (outputs computed elsewhere)"},
};

/* torch.* chains that allocate or describe, never compute (exact names). */
static const char *const torch_allowed[] = {"torch",
                                            "torch.Tensor",
                                            "torch.Size",
                                            "torch.dtype",
                                            "torch.device",
                                            "torch.empty",
                                            "torch.empty_like",
                                            "torch.empty_strided",
                                            "torch.zeros",
                                            "torch.zeros_like",
                                            "torch.float16",
                                            "torch.float32",
                                            "torch.float64",
                                            "torch.bfloat16",
                                            "torch.half",
                                            "torch.float",
                                            "torch.int8",
                                            "torch.int16",
                                            "torch.int32",
                                            "torch.int64",
                                            "torch.uint8",
                                            "torch.bool",
                                            "torch.float8_e4m3fn",
                                            "torch.float8_e5m2",
                                            "torch.finfo",
                                            "torch.iinfo",
                                            "torch.is_tensor",
                                            "torch.no_grad",
                                            "torch.inference_mode",
                                            "torch.nn",
                                            "torch.nn.Module",
                                            "torch.nn.Parameter",
                                            "torch.cuda",
                                            "torch.cuda.current_stream",
                                            "torch.cuda.current_device",
                                            "torch.cuda.device",
                                            "torch.cuda.Stream",
                                            "torch.cuda.stream",
                                            "torch.cuda.is_available",
                                            "torch.cuda.get_device_properties",
                                            "torch.cuda.get_device_capability",
                                            "torch.cuda.get_device_name",
                                            "torch.version",
                                            NULL};

const struct pol_rule *pol_rules(size_t *n)
{
    *n = sizeof(rules) / sizeof(rules[0]);
    return rules;
}

/* pattern vs name: "a.b" matches "a.b" and "a.b.c"; "a.b*" any name starting so. */
static bool chain_match(const char *pattern, const char *name, bool dotted)
{
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '*')
        return strncmp(pattern, name, n - 1) == 0;
    if (strncmp(pattern, name, n) != 0)
        return false;
    return name[n] == '\0' || (dotted && name[n] == '.');
}

static bool row_matches(const struct pol_rule *r, const char *name)
{
    switch (r->kind) {
    case PK_PY_MODULE:
        return chain_match(r->pattern, name, true);
    case PK_STRING:
        return strstr(name, r->pattern) != NULL;
    case PK_C_INCLUDE:
        return strncmp(r->pattern, name, strlen(r->pattern)) == 0;
    default:
        return chain_match(r->pattern, name, false);
    }
}

const struct pol_rule *pol_match(enum pol_kind kind, enum aka_policy_fw fw, const char *name)
{
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        const struct pol_rule *r = &rules[i];
        if (r->kind == kind && (r->fws & FW(fw)) && row_matches(r, name))
            return r;
    }
    return NULL;
}

bool pol_torch_allowed(const char *chain)
{
    /* exact names only: torch.Tensor is allowed as a type, torch.Tensor.matmul is compute */
    for (const char *const *a = torch_allowed; *a; a++)
        if (strcmp(chain, *a) == 0)
            return true;
    return false;
}

/* ---- framework names (the scanners name the framework in their messages) ---- */

static const char *const fw_names[AKA_FW_COUNT] = {"triton",   "gluon",  "cutedsl", "cuda",
                                                   "tilelang", "flydsl", "c"};

int aka_policy_framework(const char *name, enum aka_policy_fw *out, struct aka_err *err)
{
    static const struct {
        const char *key;
        enum aka_policy_fw fw;
    } keys[] = {
        {"triton", AKA_FW_TRITON},   {"gluon", AKA_FW_GLUON},       {"tritongluon", AKA_FW_GLUON},
        {"cutedsl", AKA_FW_CUTEDSL}, {"cute", AKA_FW_CUTEDSL},      {"cuda", AKA_FW_CUDA},
        {"cudac", AKA_FW_CUDA},      {"tilelang", AKA_FW_TILELANG}, {"flydsl", AKA_FW_FLYDSL},
        {"fly", AKA_FW_FLYDSL},      {"c", AKA_FW_NATIVE_C},        {"native", AKA_FW_NATIVE_C},
        {"nativec", AKA_FW_NATIVE_C}};
    char key[32];
    size_t n = 0;
    for (const char *p = name ? name : ""; *p && n + 1 < sizeof(key); p++)
        if (isalnum((unsigned char)*p))
            key[n++] = (char)tolower((unsigned char)*p);
    key[n] = '\0';
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        if (strcmp(keys[k].key, key) == 0) {
            *out = keys[k].fw;
            return 0;
        }
    return aka_err_set(err, AKA_EXIT_USAGE,
                       "--framework: expected one of triton, gluon, cutedsl, cuda, tilelang, "
                       "flydsl, c; got \"%s\"",
                       name ? name : "");
}

const char *aka_policy_framework_name(enum aka_policy_fw fw)
{
    return fw < AKA_FW_COUNT ? fw_names[fw] : "?";
}
