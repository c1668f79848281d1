"""The main command installs only what the main job uses: its package
profile holds compilers, CMake, Open MPI, xxHash and Python's venv, not
MPICH, clang, Redis or memcached, which the test command's profile adds."""

import subprocess
from pathlib import Path

import pytest

# The scripts' package lists: no communicator of the tests' job.
pytestmark = pytest.mark.one_process

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-deps.sh"


def packages(*args: str) -> list[str]:
    out = subprocess.run(["bash", str(SCRIPT), "--list", *args], capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout.split()


def test_main_profile_is_what_the_main_job_uses() -> None:
    main, everything = packages("main"), packages("all")
    assert {"openmpi-bin", "libopenmpi-dev", "cmake", "libxxhash-dev", "python3-venv"} <= set(main)
    for extra in ("mpich", "clang", "redis-server", "memcached", "libhiredis-dev"):
        assert extra not in main and extra in everything
    assert set(main) <= set(everything) and packages() == everything
    assert "install-deps.sh\" main" in (ROOT / "scripts" / "run-main.sh").read_text()


def test_unknown_profile_is_refused() -> None:
    out = subprocess.run(["bash", str(SCRIPT), "--list", "tiny"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "unknown profile 'tiny'" in out.stderr


@pytest.mark.parametrize("script", ["scripts/run-main.sh", "scripts/run-tests.sh",
                                    "scripts/check-sdist.sh"])
def test_help_says_what_a_script_does_and_runs_nothing(script: str) -> None:
    """--help prints the script's header and exits 0 before it does any of
    its work (run-main.sh ran the whole main job); an argument a script
    does not take is refused with status 2."""
    path = ROOT / script
    header = path.read_text().splitlines()[1].lstrip("# ")
    out = subprocess.run(["bash", str(path), "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.splitlines()[0] == header
    for args in (["--bogus"], ["", "--bogus"], ["--help", "--bogus"]):
        out = subprocess.run(["bash", str(path), *args], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 2 and out.stderr.startswith(
            (f"{path.name}: ", f"usage: {path.name}"))


@pytest.mark.parametrize("script,option", [("bench/run-suite.sh", "--ops"),
                                           ("bench/run-hosts.sh", "--hosts"),
                                           ("bench/compare-builds.sh", "--before")])
def test_option_without_its_value_is_named(script: str, option: str) -> None:
    out = subprocess.run(["bash", str(ROOT / script), option], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr == f"{option} needs a value (--help lists the options)\n"


@pytest.mark.parametrize("script", ["bench/run-suite.sh", "bench/run-hosts.sh",
                                    "bench/compare-builds.sh"])
def test_bench_script_help_and_usage_errors(script: str) -> None:
    """A benchmark script's --help is its header without the comment marks
    (and no line of the script itself); an unknown option exits 2."""
    path = ROOT / script
    header = path.read_text().splitlines()[1].lstrip("# ")
    out = subprocess.run(["bash", str(path), "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.splitlines()[0] == header
    assert not any(line.startswith(("#", "set ")) for line in out.stdout.splitlines())
    out = subprocess.run(["bash", str(path), "--bogus"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and out.stderr.startswith("unknown option --bogus")


SUITE, HOSTS = "bench/run-suite.sh", "bench/run-hosts.sh"


@pytest.mark.parametrize("script,args,words", [
    (SUITE, ["--ops", "1e5"], "--ops '1e5'"),
    (SUITE, ["--server-ops", "0"], "--server-ops '0'"),
    (SUITE, ["--nprocs", "0"], "--nprocs '0'"),
    (SUITE, ["--nprocs", "1 two"], "--nprocs '1 two'"),
    (SUITE, ["--nprocs", "1 2 2"], "--nprocs '1 2 2': a value given twice"),
    (SUITE, ["--batches", "1 1 8"], "--batches '1 1 8': a value given twice"),
    (SUITE, ["--results", ""], "--results '': expected a folder"),
    (SUITE, ["--results", "--ops"], "--results '--ops': expected a folder"),
    # An empty --hosts ran only the progress runs, 08 printed bash's own
    # error first, and the counts' message named no option.
    (HOSTS, ["--hosts", "08"], "--hosts '08': expected counts from 2 to 16"),
    (HOSTS, ["--hosts", ""], "--hosts '': expected counts from 2 to 16"),
    (HOSTS, ["--hosts", "2 2"], "--hosts '2 2': a count given twice"),
    (HOSTS, ["--ops", "99999999999999999999"], "--ops '99999999999999999999': expected a"),
    (HOSTS, ["--progress-ops", "0"], "--progress-ops '0': expected a whole"),
    (HOSTS, ["--results", ""], "--results '': expected a folder"),
])
def test_bench_script_refuses_bad_values_before_any_work(script: str, args: list[str],
                                                         words: str) -> None:
    out = subprocess.run(["bash", str(ROOT / script), *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.startswith(words)


@pytest.mark.parametrize("script", [SUITE, HOSTS])
def test_bench_script_keeps_a_raw_folder_it_did_not_write(script: str,
                                                          tmp_path: Path) -> None:
    """--results DIR rewrites DIR/raw whole, so a DIR/raw holding anything
    the script does not write there is refused before any work, untouched
    (run-hosts.sh removed it whatever it held, the suite's committed raw/
    too)."""
    mine = tmp_path / "raw" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("kept")
    out = subprocess.run(["bash", str(ROOT / script), "--results", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "did not write there" in out.stderr
    assert mine.read_text() == "kept"
