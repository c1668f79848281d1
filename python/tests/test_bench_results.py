"""bench/plot_results.py: runs repeated with the same settings become one
row holding the median and the range, and the tables and figures are
written from them."""

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import REPO, load_script

# Pure Python on files: no communicator of the tests' job.
pytestmark = pytest.mark.one_process


@pytest.fixture(scope="module")
def plot_results() -> ModuleType:
    return load_script("plot_results", "bench/plot_results.py")


def row(protocol: str, phase: str, ranks: int, ops_per_s: float, p50: float) -> dict[str, Any]:
    return {"protocol": protocol, "phase": phase, "distribution": "uniform",
            "ranks": ranks, "ops": 1000, "ops_per_s": ops_per_s, "p50_us": p50,
            "p99_us": 2 * p50, "mean_us": p50, "misses": 0, "checksum_mismatches": 0}


def write_results(plot_results: ModuleType, raw: Path, out: Path,
                  monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the script on raw (2 cores) and returns the RESULTS.md it wrote to out."""
    monkeypatch.setattr(sys, "argv", ["plot_results.py", str(raw), str(out), "--cores", "2"])
    plot_results.main()
    return (out / "RESULTS.md").read_text()


def test_repeats_become_median_and_range(plot_results: ModuleType) -> None:
    runs = [row("lockfree", "read", 2, rate, p50)
            for rate, p50 in ((3e6, 0.4), (5e6, 0.2), (4e6, 0.3))]
    other = row("coarse", "read", 2, 1e6, 1.0)
    rows = plot_results.aggregate([*runs, other])
    assert len(rows) == 2
    lockfree = next(r for r in rows if r["protocol"] == "lockfree")
    assert lockfree["ops_per_s"] == 4e6 and lockfree["p50_us"] == 0.3
    assert (lockfree["ops_per_s_min"], lockfree["ops_per_s_max"]) == (3e6, 5e6)
    assert lockfree["repeats"] == 3
    coarse = next(r for r in rows if r["protocol"] == "coarse")
    assert coarse["repeats"] == 1 and coarse["ops_per_s"] == 1e6


def test_settings_that_differ_stay_apart(plot_results: ModuleType) -> None:
    rows = plot_results.aggregate([row("lockfree", "read", 1, 1e6, 0.3),
                                   row("lockfree", "read", 2, 2e6, 0.3),
                                   row("lockfree", "write", 2, 3e6, 0.3)])
    assert sorted(r["ops_per_s"] for r in rows) == [1e6, 2e6, 3e6]
    assert all(r["repeats"] == 1 for r in rows)


def test_tables_and_figures_from_repeated_runs(plot_results: ModuleType, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    for rep, scale in ((1, 1.0), (2, 1.5), (3, 0.5)):
        rows = [row(p, phase, ranks, scale * 1e6 * ranks, 0.3)
                for p in ("coarse", "fine", "lockfree") for phase in ("write", "read")
                for ranks in (1, 2, 4)]
        rows += [row("-", "raw-get", ranks, 4e6, 0.25) for ranks in (1, 2, 4)]
        (raw / f"dht_uniform_r{rep}.json").write_text(json.dumps(rows))
    out = tmp_path / "out"
    text = write_results(plot_results, raw, out, monkeypatch)
    # fine, read, 4 ranks: 4e6 x (1, 1.5, 0.5): median 4e6, range 2e6-6e6
    assert "| fine | read | uniform | 4 | 4000000 (2000000–6000000, 3 runs) |" in text
    assert "the runs at more than 2 ranks share the 2 cores" in text
    for figure in ("throughput.png", "latency.png", "comparison.png"):
        assert (out / figure).stat().st_size > 10_000


def test_batch_passes_give_a_range(plot_results: ModuleType) -> None:
    # Mirrored passes 1, 8, 8, 1: single calls 1e6 and 3e6 keys/s (combined
    # over equal key counts: 1.5e6), batches of 8 at 3e6 and 6e6.
    rows = [{**row("lockfree", "read", 2, rate, 0.3), "batch": size}
            for size, rate in ((1, 1e6), (8, 3e6), (8, 6e6), (1, 3e6))]
    assert plot_results.pass_range(rows, "read", "lockfree", 2, 8) == pytest.approx((2.0, 4.0))
    assert plot_results.pass_range(rows, "read", "lockfree", 2, 64) is None
    assert plot_results.pass_range(rows[:2], "read", "lockfree", 2, 8) is None


def test_batch_table_gives_every_batched_phase(plot_results: ModuleType) -> None:
    """The batched-operations table has a pair of columns (keys/s,
    speedup over single calls) for reads, and for writes and fill where
    they were measured in batches; a phase a protocol did not measure
    shows dashes."""
    rows = [{**row("lockfree", phase, 2, rate, 0.3), "batch": size}
            for phase, size, rate in (("read", 1, 1e6), ("read", 8, 3e6),
                                      ("fill", 1, 2e6), ("fill", 8, 5e6))]
    rows.append({**row("coarse", "read", 2, 1e6, 0.3), "batch": 1})
    table = plot_results.batch_table(rows)
    assert table[0] == ("| ranks | protocol | batch | read keys/s | read speedup |"
                        " fill keys/s | fill speedup |")
    assert "| 2 | lockfree | 8 | 3000000 | 3.00× | 5000000 | 2.50× |" in table
    assert "| 2 | coarse | 1 | 1000000 | 1.00× | – | – |" in table
    rows.append({**row("lockfree", "write", 2, 1e6, 0.3), "batch": 8})
    assert "| write keys/s | write speedup | fill keys/s |" in plot_results.batch_table(rows)[0]


def test_targets_headline_the_worst_rank_count(plot_results: ModuleType) -> None:
    """Each target's ratio leads with its worst rank count (lowest for an
    at-least target, highest for the latency's at-most), whichever rank
    count that is, and gives the others beside it."""
    rows = [row("lockfree", "read", 1, 6e6, 0.30), row("coarse", "read", 1, 2e6, 0.5),
            row("lockfree", "read", 2, 3e6, 0.24), row("coarse", "read", 2, 2e6, 0.5),
            row("lockfree", "read", 4, 9e6, 0.40), row("coarse", "read", 4, 2e6, 0.5),
            row("-", "raw-get", 1, 5e6, 0.20), row("-", "raw-get", 2, 5e6, 0.24),
            row("-", "raw-get", 4, 5e6, 0.25)]
    lines = plot_results.targets(rows, [])
    reads = next(line for line in lines if line.startswith("| lock-free reads / coarse"))
    assert "| 1.50× (2 ranks); ranks 1: 3.00×, 4: 4.50× |" in reads
    latency = next(line for line in lines if "raw MPI_Get" in line)
    assert "| 1.60× (4 ranks: p50 0.40 µs against 0.25 µs); ranks 1: 1.50×, 2: 1.00× |" in latency
    redis = next(line for line in lines if line.startswith("| lock-free reads / Redis"))
    assert redis.endswith("| n/a |")  # no Redis rows: no figure made up


def test_targets_take_the_worst_run(plot_results: ModuleType) -> None:
    """A target's ratio is taken within each run, and the worst run leads,
    with the median over the runs beside it: a run in which coarse reads
    were as fast as lock-free ones is not hidden by the medians of each
    (4e6 / 1e6 = 4.00x). A server that ran once is set against every run."""
    rows = []
    for run, lockfree, coarse in ((1, 3e6, 1e6), (2, 4e6, 1e6), (3, 5e6, 4e6)):
        rows += [{**row("lockfree", "read", 1, lockfree, 0.3), "run": run},
                 {**row("coarse", "read", 1, coarse, 0.3), "run": run}]
    rows.append({**row("redis-sync1", "read", 1, 1e5, 60.0), "run": 1})
    lines = plot_results.targets(rows, [])
    reads = next(line for line in lines if line.startswith("| lock-free reads / coarse"))
    assert reads.endswith("| 1.25× (1 rank: run 3; median of 3 runs 3.00×) |")
    redis = next(line for line in lines if line.startswith("| lock-free reads / Redis"))
    assert redis.endswith("| 30.00× (1 rank: run 1; median of 3 runs 40.00×) |")


def test_latency_target_compares_the_slowest_ranks(plot_results: ModuleType) -> None:
    """Where the rows give the slowest rank's p50, the latency target
    compares those (the p50 of all ranks' samples together can hide a slow
    rank); rows without it fall back to that pooled p50."""
    rows = [{**row("lockfree", "read", 2, 1e6, 0.30), "p50_slowest_us": 0.40},
            {**row("-", "raw-get", 2, 1e6, 0.30), "p50_slowest_us": 0.25}]
    lines = plot_results.targets(rows, [])
    latency = next(line for line in lines if "raw MPI_Get" in line)
    assert latency.endswith("| 1.60× (2 ranks: slowest rank's p50 0.40 µs against 0.25 µs) |")
    del rows[1]["p50_slowest_us"]
    latency = next(line for line in plot_results.targets(rows, []) if "raw MPI_Get" in line)
    assert latency.endswith("| 1.00× (2 ranks: p50 0.30 µs against 0.30 µs) |")


def test_all_rows_give_the_slowest_ranks_percentiles(plot_results: ModuleType) -> None:
    """Every row gives the slowest rank's p50 and p99 beside those of all
    ranks' samples together, which can hide one slow rank; a run that did
    not give them shows a dash, not another figure."""
    rows = [{**row("lockfree", "read", 2, 1e6, 0.30), "p50_slowest_us": 0.40,
             "p99_slowest_us": 2.50},
            row("coarse", "read", 2, 1e6, 0.50)]
    lines = plot_results.table(rows)
    header = next(line for line in lines if line.startswith("| protocol |"))
    assert "| p50 µs | p99 µs | slowest rank's p50 µs | slowest rank's p99 µs |" in header
    lockfree = next(line for line in lines if line.startswith("| lockfree |"))
    assert "| 0.300 | 0.600 | 0.400 | 2.500 | 0.300 |" in lockfree
    coarse = next(line for line in lines if line.startswith("| coarse |"))
    assert "| 0.500 | 1.000 | – | – | 0.500 |" in coarse


def test_batched_reads_target_names_the_worst_protocol(plot_results: ModuleType) -> None:
    """The batches-of-64 target is the worst speedup of any protocol and
    rank count, not the lock-free one's alone."""
    batch_rows = []
    for protocol, ranks, single, b64 in (("lockfree", 1, 1e6, 4e6), ("lockfree", 2, 2e6, 5e6),
                                         ("coarse", 1, 1e6, 3e6), ("coarse", 2, 2e6, 3e6),
                                         ("fine", 1, 1e6, 2.5e6), ("fine", 2, 2e6, 6e6)):
        for batch, rate in ((1, single), (64, b64)):
            batch_rows.append(dict(row(protocol, "read", ranks, rate, 0.3), batch=batch))
    lines = plot_results.targets([], batch_rows)
    reads = next(line for line in lines if "batches of 64" in line)
    assert "| 1.50× (coarse, 2 ranks); worst of fine 2.50×, lockfree 2.50× |" in reads


def test_mpich_target_names_the_worst_protocol_and_rank_count(plot_results: ModuleType) -> None:
    """MPICH's read latency is compared with Open MPI's for every protocol
    and rank count measured under both; the worst ratio leads, whatever
    protocol has it, and rows measured under one MPI only are left out."""
    mpi_rows = []
    for protocol, ranks, openmpi, mpich in (("lockfree", 1, 0.30, 0.33),
                                            ("lockfree", 2, 0.30, 0.27),
                                            ("fine", 1, 0.40, 0.44), ("fine", 2, 0.40, 0.70),
                                            ("coarse", 1, 0.50, 0.50)):
        mpi_rows.append({**row(protocol, "read", ranks, 1e6, openmpi), "mpi": "openmpi"})
        mpi_rows.append({**row(protocol, "read", ranks, 1e6, mpich), "mpi": "mpich"})
    mpi_rows.append({**row("coarse", "read", 4, 1e6, 9.0), "mpi": "mpich"})  # no Open MPI row
    lines = plot_results.targets([], [], mpi_rows)
    target = next(line for line in lines if line.startswith("| MPICH read latency"))
    assert target.endswith("| ≤ 1.5× | 1.75× (fine, 2 ranks: p50 0.70 µs against 0.40 µs); "
                           "worst of coarse 1.00×, lockfree 1.10× |")


def test_restore_target_names_the_slowest(plot_results: ModuleType) -> None:
    """The restore target is the slowest round of any protocol and rank
    count, not one protocol's and not a median, which is given beside."""
    persist_rows = [{"protocol": protocol, "ranks": ranks, "entries": 100, "megabytes": 100.0,
                     "round": round_, "dump_seconds": 0.2, "restore_seconds": seconds}
                    for protocol, ranks, runs in (("lockfree", 1, (0.2, 0.25, 0.5)),
                                                  ("lockfree", 2, (0.2, 0.2, 0.2)),
                                                  ("coarse", 1, (0.1, 0.1, 0.1)),
                                                  ("fine", 2, (0.3, 0.2, 0.1)))
                    for round_, seconds in enumerate(runs, 1)]
    lines = plot_results.targets([], [], persist_rows=persist_rows)
    target = next(line for line in lines if line.startswith("| restore throughput"))
    assert target.endswith("| ≥ 300 MB/s | 200 MB/s (lockfree, 1 rank: round 3; median of 3 "
                           "rounds 400 MB/s); slowest of coarse 1000 MB/s, fine 333 MB/s |")
    assert not any(line.startswith("| restore") for line in plot_results.targets([], []))


def test_mpi_files_give_the_mpi_section(plot_results: ModuleType, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """raw/mpi/<mpi>_*.json: each file's MPI is its name's first part; the
    repeats of a setting under one MPI are one row of the table (median,
    range), and the target is the worst pair of runs."""
    raw = tmp_path / "raw"
    (raw / "mpi").mkdir(parents=True)
    (raw / "dht_uniform_r1.json").write_text(json.dumps([row("lockfree", "read", 1, 1e6, 0.3)]))
    for rep, openmpi, mpich in ((1, 0.30, 0.36), (2, 0.20, 0.33), (3, 0.25, 0.30)):
        for mpi, p50 in (("openmpi", openmpi), ("mpich", mpich)):
            (raw / "mpi" / f"{mpi}_np1_r{rep}.json").write_text(
                json.dumps([row("lockfree", "read", 1, 1e6, p50)]))
    out = tmp_path / "out"
    text = write_results(plot_results, raw, out, monkeypatch)
    assert "| 1 | lockfree | read | 0.250 (0.200–0.300) | 0.330 (0.300–0.360) | 1.32× |" in text
    # the target pairs the runs: 1.20x, 1.65x, 1.20x
    assert ("| ≤ 1.5× | 1.65× (lockfree, 1 rank: run 2; p50 0.33 µs against 0.20 µs; median "
            "of 3 runs 1.20×) |") in text


def test_a_file_cut_short_is_named(plot_results: ModuleType, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A --json file that a run ending early left cut short stops the
    script with a message naming it (it raised a JSONDecodeError)."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.json").write_text(json.dumps([row("coarse", "read", 1, 1e6, 0.5)]))
    (raw / "b.json").write_text("[\n  {\"protocol\": \"coarse\"")
    with pytest.raises(SystemExit, match=r"b\.json: not a file of result rows .*cut short"):
        write_results(plot_results, raw, tmp_path / "out", monkeypatch)


def test_hosts_results_from_the_committed_runs(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/plot_hosts.py on the committed runs across emulated hosts
    writes its tables and figures; it stopped with a TypeError at the
    targets (a helper of plot_results.py it calls had changed), the last
    step of bench/run-hosts.sh."""
    plot_hosts = load_script("plot_hosts", "bench/plot_hosts.py")
    raw = REPO / "bench" / "results" / "hosts" / "raw"
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["plot_hosts.py", str(raw), str(out), "--cores", "2"])
    plot_hosts.main()
    text = (out / "RESULTS.md").read_text()
    assert "| lock-free reads / coarse reads (uniform) | ≥ 3× | 2.36× |" in text
    assert "| lock-free writes / coarse writes (zipf) | ≥ 50× | 0.91× |" in text
    assert all((out / name).is_file() for name in ("throughput.png", "latency.png",
                                                   "progress.png"))


def test_server_runs_at_as_many_ranks_as_cores_are_oversubscribed(
        plot_results: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server run has one process more than its ranks: at 2 ranks on 2
    cores it is oversubscribed, which RESULTS.md marked only above 2."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "dht_uniform_r1.json").write_text(json.dumps(
        [row("lockfree", "read", n, 1e6, 0.3) for n in (1, 2)]))
    (raw / "redis-pipe16_uniform_np2.json").write_text(json.dumps(
        [row("redis-pipe16", "read", n, 1e5, 30.0) for n in (1, 2)]))
    text = write_results(plot_results, raw, tmp_path / "out", monkeypatch)
    assert ("- The server runs (Redis, memcached) at 2 ranks are oversubscribed too: the "
            "server is a process of its own beside the ranks.") in text
    assert "- Oversubscribed: the runs at more than" not in text
