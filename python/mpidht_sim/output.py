"""What a run leaves behind: fields per saved iteration as VTK (meshio; opens
in ParaView) and NumPy .npz, a summary JSON, and plots (maps of Ca, Mg,
calcite and dolomite; hit rate and runtime per iteration)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .config import VARIABLES, Config
from .driver import RunResult

MAPPED = ("Ca", "Mg", "calcite", "dolomite")


def _mesh(cfg: Config) -> tuple[Any, Any]:
    """Corner points and quad cells of the grid, cell (x, y) at index y*nx+x."""
    xs = np.arange(cfg.nx + 1) * cfg.cell_size
    ys = -np.arange(cfg.ny + 1) * cfg.cell_size  # y = 0 is the top row
    px, py = np.meshgrid(xs, ys)
    points = np.column_stack([px.ravel(), py.ravel(), np.zeros(px.size)])
    corner = (np.arange(cfg.ny)[:, None] * (cfg.nx + 1) + np.arange(cfg.nx)[None, :]).ravel()
    quads = np.column_stack([corner, corner + 1, corner + cfg.nx + 2, corner + cfg.nx + 1])
    return points, quads


def write_fields(result: RunResult, cfg: Config, out_dir: Path) -> None:
    import meshio

    points, quads = _mesh(cfg)
    for it, state in result.saved.items():
        fields: dict[str, Any] = {v: state[:, j].reshape(cfg.ny, cfg.nx)
                                  for j, v in enumerate(VARIABLES)}
        np.savez_compressed(out_dir / f"fields_{it:05d}.npz", **fields)
        mesh = meshio.Mesh(points, [("quad", quads)],
                           cell_data={v: [state[:, j]] for j, v in enumerate(VARIABLES)})
        mesh.write(out_dir / f"fields_{it:05d}.vtu")


def plot(result: RunResult, cfg: Config, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    its = sorted(result.saved)
    fig, axes = plt.subplots(len(MAPPED), len(its), squeeze=False,
                             figsize=(2.6 * len(its) + 1, 2.4 * len(MAPPED)))
    for row, name in enumerate(MAPPED):
        j = VARIABLES.index(name)
        top = max(float(result.saved[it][:, j].max()) for it in its) or 1.0
        for col, it in enumerate(its):
            ax = axes[row][col]
            image = ax.imshow(result.saved[it][:, j].reshape(cfg.ny, cfg.nx), vmin=0, vmax=top,
                              cmap="viridis", interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                ax.set_title(f"iteration {it}", fontsize=9)
            if col == 0:
                ax.set_ylabel(name)
        fig.colorbar(image, ax=axes[row].tolist(), shrink=0.8)
    path = out_dir / "maps.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)

    records = result.records
    x = [r.iteration for r in records]
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(7, 5.5))
    a1.plot(x, [r.hits / max(r.hits + r.misses, 1) for r in records])
    a1.set_ylabel("DHT hit rate")
    a1.set_ylim(0, 1.02)
    a2.plot(x, [r.transport_s for r in records], label="transport")
    a2.plot(x, [r.chemistry_s for r in records], label="chemistry (PHREEQC)")
    a2.plot(x, [r.dht_s for r in records], label="DHT")
    a2.plot(x, [r.wall_s for r in records], label="iteration (wall)", color="black")
    a2.set_ylabel("seconds")
    a2.set_xlabel("iteration")
    a2.legend()
    fig.tight_layout()
    path = out_dir / "iterations.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    return paths


def save(result: RunResult, cfg: Config, out_dir: Path, extra: dict[str, Any],
         plots: bool = True) -> Path:
    """Everything a run leaves behind; returns the summary's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_fields(result, cfg, out_dir)
    if plots:
        plot(result, cfg, out_dir)
    summary = {
        "config": str(cfg.source), "nx": cfg.nx, "ny": cfg.ny,
        "iterations": cfg.iterations, "dht": cfg.dht.enabled,
        "wall_s": result.wall_s, "evictions": result.evictions,
        "restored_entries": result.restored,
        "dht_dump": str(result.dht_dump) if result.dht_dump else None,
        "records": [r.__dict__ for r in result.records], **extra,
    }
    path = out_dir / "summary.json"
    path.write_text(json.dumps(summary, indent=1))
    return path
