"""Builds mpidht._core: the C library's sources and the extension, compiled
with the system MPI's compiler wrapper (``$MPICC``, default ``mpicc``).
It needs no mpi4py at build time: communicators cross over as handles, and
at import mpidht checks that mpi4py uses the same MPI library. Metadata is
in pyproject.toml, except the version, which comes from include/mpidht.h."""

import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()


class BuildWithMpicc(build_ext):
    """Compiles and links with the MPI compiler wrapper, as mpi4py does.

    Objects go to a fresh temporary folder, removed when the build ends,
    and are always rebuilt: objects of an earlier build may come from
    another MPI library."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.force = True

    def run(self) -> None:
        with tempfile.TemporaryDirectory(prefix="mpidht-build-") as temp:
            self.build_temp = temp
            super().run()

    def build_extensions(self) -> None:
        mpicc = os.environ.get("MPICC", "mpicc")
        if shutil.which(shlex.split(mpicc)[0]) is None:
            raise RuntimeError(
                f"MPI compiler wrapper {mpicc!r} not found: install an MPI "
                "development package (e.g. libopenmpi-dev) or set MPICC")
        cc = shlex.split(mpicc)
        # As CMakeLists.txt builds the library: its calls to its own
        # functions may be inlined and bind inside it (no PLT).
        self.compiler.set_executable("compiler_so", cc + ["-fPIC", "-O2", "-std=c11",
                                                          "-fno-semantic-interposition"])
        self.compiler.set_executable("linker_so", cc + ["-shared", "-Wl,-Bsymbolic-functions"])
        super().build_extensions()


def version() -> str:
    """MAJOR.MINOR.PATCH from the MPIDHT_VERSION_* lines of include/mpidht.h,
    where the version is defined (CMakeLists.txt reads the same lines)."""
    header = (ROOT / "include" / "mpidht.h").read_text(encoding="utf-8")
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        match = re.search(rf"^#define MPIDHT_VERSION_{part} +([0-9]+) *$", header, re.M)
        if match is None:
            raise RuntimeError(f"include/mpidht.h does not define MPIDHT_VERSION_{part} "
                               "as a number")
        parts.append(match.group(1))
    return ".".join(parts)


def sources() -> list[str]:
    library = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src").glob("*.c"))
    return library + ["python/mpidht/_core.c", "python/mpidht/_interp.c",
                      "python/mpidht/_rows.c"]


setup(
    version=version(),
    ext_modules=[
        Extension(
            "mpidht._core",
            sources=sources(),
            include_dirs=["include", "src"],
            define_macros=[("_POSIX_C_SOURCE", "200809L")],
            libraries=["xxhash", "m"],
        )
    ],
    cmdclass={"build_ext": BuildWithMpicc},
)
