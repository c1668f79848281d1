"""validate's reports: verdicts, maps and plots on the worst cell (the RMS
term beside it), the bounds per run, and --rewrite from the JSON."""

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from mpidht_sim.cli import launcher_rank
from mpidht_sim.config import load
from mpidht_sim.driver import initial_state
from mpidht_sim.output import write_field
from mpidht_sim.validate import (Point, Variant, main, report, rewrite, tradeoff_report,
                                 within_bounds)

REPO = Path(__file__).resolve().parents[2]
SETTING = ("50", "50", "300", "57600", "2", "lockfree", "1e-10")


def row(cell: float, rms: float, variable: str = "C", iteration: int = 10) -> dict[str, Any]:
    """A run's figures as measure_variant gives them."""
    return {"worst_max_term": cell, "worst_max_variable": variable,
            "worst_max_iteration": iteration, "worst_rms_term": rms,
            "worst_variable": variable, "worst_iteration": iteration, "eq2_max": rms / 10,
            "hit_rate": 0.8, "approximate_share": 0.9, "rejected": 0,
            "chemistry_speedup": 4.0, "wall_speedup": 3.5, "interpolated_share": 0.1,
            "phreeqc_ratio": 5.0, "verified_max_relative": None}


@pytest.mark.one_process
def test_table1_verdict_is_on_the_worst_cell() -> None:
    """Where the RMS terms say raw and log are equal but the worst cells
    say log is 10 times better, the verdict is log's, the RMS verdict
    beside it; the columns give both ratios."""
    variants = [Variant("significant", log, 5, 4) for log in (True, False)]
    rows = {variants[0].name: row(1e-7, 2.0e-9), variants[1].name: row(1e-6, 2.0e-9)}
    text = report(rows, variants, SETTING)
    assert ("**significant: log beats raw at every pair, as in Table 1** (worst cell, log "
            "over raw: 0.1 to 0.1). By the worst RMS term beside it: log and raw are equal "
            "(within 1%) at every pair, unlike Table 1 (1 to 1).") in text
    assert "| 5 | 4 | 1.00e-07 (2.00e-09; 2.00e-10) | 1.00e-06 (2.00e-09; 2.00e-10) | 0.1 | 1 |" \
        in text
    # The other way round: the worst cell decides.
    rows = {variants[0].name: row(1e-6, 1e-9), variants[1].name: row(1e-7, 2e-9)}
    assert "**significant: raw beats log at every pair, unlike Table 1**" in \
        report(rows, variants, SETTING)


@pytest.mark.one_process
def test_within_bounds_names_each_bound_exceeded() -> None:
    assert within_bounds(row(1e-3, 1e-4)) == "yes"  # at the bounds: within
    assert within_bounds(row(1.1e-3, 1e-5)) == "no: cell"
    assert within_bounds(row(9e-4, 1.1e-4)) == "no: RMS"
    assert within_bounds(row(8.7e-3, 2.6e-4)) == "no: cell and RMS"
    assert within_bounds(row(math.nan, math.nan)) == "no: cell and RMS"


@pytest.mark.one_process
def test_tradeoff_report_leads_with_the_worst_cell() -> None:
    points = [Point("interp", 2e-5), Point("interp", 5e-5)]
    rows = {points[0].name: row(8.6e-4, 5.9e-5, iteration=288),
            points[1].name: row(2.1e-3, 1.2e-4, iteration=296)}
    text = tradeoff_report(rows, points, ("50", "50", "300", "2", "2498", "standard-error"))
    lines = [line for line in text.splitlines() if line.startswith("| interpolation |")]
    assert lines[0].startswith("| interpolation | tolerance 2e-05 | 8.60e-04 (C, 288) | "
                               "5.90e-05 (C, 288) | yes |")
    assert lines[1].startswith("| interpolation | tolerance 5e-05 | 2.10e-03 (C, 296) | "
                               "1.20e-04 (C, 296) | no: cell and RMS |")


TINY = ["--set", "grid.nx=4", "--set", "grid.ny=4", "--set", "time.iterations=1",
        "--roundings", "significant", "--aqueous", "5", "--minerals", "4", "--only-log"]


def reference_config() -> dict[str, Any]:
    """The configuration a reference of TINY records in its summary.json."""
    return load(None, {"grid.nx": 4, "grid.ny": 4, "time.iterations": 1,
                       "dht.enabled": False, "run.save_every": 1}).to_dict()


@pytest.mark.parametrize("summary, why", [
    ([], "is not a run's summary: a JSON list, not an object"),
    ({"config": []}, 'records no configuration (its "config" is no object)'),
    ({"config": {"dht": 5}}, 'does not record whether the run used the DHT'),
    ({"config": {"dht": {"enabled": "no"}}}, 'does not record whether the run used the DHT'),
    ({"config": "reference", "records": [], "wall_s": 1.0},
     'records no timings of a run ("records" with each iteration'),
    ({"config": "reference", "records": [{"chemistry_s": "1"}], "wall_s": 1.0},
     'records no timings of a run'),
])
def test_reference_summary_not_a_runs_is_refused(tmp_path: Path, summary: Any, why: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """validate --reference DIR whose summary.json is JSON but not a run's
    is refused before any run, exit status 2, saying what it lacks (it
    was a traceback: AttributeError, or a TypeError once the variants had
    run)."""
    ref = tmp_path / "ref"
    ref.mkdir()
    if isinstance(summary, dict) and summary.get("config") == "reference":
        summary = {**summary, "config": reference_config(),
                   "records": summary["records"] or "none"}
        cfg = load(None, {"grid.nx": 4, "grid.ny": 4})
        for it in (0, 1):  # fields of every iteration, as a reference saves them
            write_field(cfg, ref, it, initial_state(cfg))
    (ref / "summary.json").write_text(json.dumps(summary))
    assert main(TINY + ["--reference", str(ref), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    if launcher_rank() == 0:  # the one that prints
        assert (f"mpidht_sim.validate: configuration error: --reference {ref}: "
                f"{ref / 'summary.json'} ") in err and why in err
        assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.one_process
@pytest.mark.parametrize("folder", ["table1/full", "table1/full-decimal", "table1/quarter",
                                    "table1/quarter-floor0", "tradeoff"])
def test_committed_results_are_what_rewrite_writes(tmp_path: Path, folder: str) -> None:
    """The committed reports are the tool's own from the committed JSON:
    --rewrite on a copy writes the same Markdown, and a figure."""
    source = REPO / "bench" / "results" / folder
    if not source.is_dir():
        pytest.skip(f"{source} not here (an installed copy without the repository)")
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    png = next(copy.glob("*.png"))
    png.unlink()
    assert main(["--rewrite", str(copy)]) == 0
    md = next(source.glob("*.md")).name
    assert (copy / md).read_text() == (source / md).read_text()
    assert png.stat().st_size > 0


@pytest.mark.one_process
def test_rewrite_refuses_what_it_cannot_read(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rewrite", str(tmp_path)]) == 2
    assert "holds neither validation.json nor tradeoff.json" in capsys.readouterr().err
    variants = [Variant("decimal", True, 5, 4)]
    data = {variants[0].name: {"rounding": "decimal", "log": True, "aqueous": 5,
                               "minerals": 4, **row(1e-6, 1e-8)}}
    (tmp_path / "validation.json").write_text(json.dumps(data))
    # The Markdown file missing: named as such (the JSON file was blamed).
    assert main(["--rewrite", str(tmp_path)]) == 2
    assert (f"{tmp_path / 'validation.md'} cannot be read, which states the setting of "
            f"{tmp_path / 'validation.json'}: No such file or directory"
            ) in capsys.readouterr().err
    (tmp_path / "validation.md").write_text("# no setting here\n")
    assert main(["--rewrite", str(tmp_path)]) == 2
    assert "states no setting as the command writes it" in capsys.readouterr().err
    (tmp_path / "validation.md").write_text(report(
        {variants[0].name: data[variants[0].name]}, variants, SETTING))
    assert rewrite(tmp_path) == [
        f"written from {tmp_path / 'validation.json'}: {tmp_path / 'validation.md'}, "
        f"{tmp_path / 'validation.png'}"]
    del data[variants[0].name]["worst_max_term"]
    (tmp_path / "validation.json").write_text(json.dumps(data))
    assert main(["--rewrite", str(tmp_path)]) == 2
    assert "cannot be read as the command writes it: KeyError" in capsys.readouterr().err


@pytest.mark.one_process
@pytest.mark.parametrize("content, why", [
    ("{}", "holds no runs"), ("[]", "holds no runs"), ("5", "holds no runs"),
    ("not json", "cannot be read as the command writes it: not JSON"),
    ('{"a": 5}', "cannot be read as the command writes it: TypeError")])
def test_rewrite_writes_nothing_from_what_it_cannot_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str) -> None:
    """--rewrite from a validation.json without runs (or not the command's)
    is refused before anything is written: validation.md was rewritten as
    an empty table first, then the figure failed."""
    variants = [Variant("decimal", True, 5, 4)]
    md = report({variants[0].name: row(1e-6, 1e-8)}, variants, SETTING)
    (tmp_path / "validation.md").write_text(md)
    (tmp_path / "validation.json").write_text(content)
    assert main(["--rewrite", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"mpidht_sim.validate: --rewrite {tmp_path}: {tmp_path / 'validation.json'} " in err
    assert why in err
    assert (tmp_path / "validation.md").read_text() == md
    assert sorted(p.name for p in tmp_path.iterdir()) == ["validation.json", "validation.md"]
