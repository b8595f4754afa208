"""The retrieval benchmark's report: ``benches/results/retrieval.md`` and ``retrieval.png``
from the rows ``retrieval.py`` measured (``retrieval.json``).

Every comparison is per slice of the questions: all of them, those with one reference excerpt,
those with two or more (``SLICES``); and every context is also described by how it reads: its
number of separate spans and the share of their ends on a sentence or paragraph end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SLICES = {"all": "all", "one": "one excerpt", "multi": "2+ excerpts"}
CURVE_BUDGETS = (500, 1000, 1500, 2000, 3000, 4000)
BAR_BUDGETS = (1000, 2000, 4000)
DEFAULT = "spanchunk 1600/400/100 assemble"  # assemble with its defaults


def rows_at(rows: list[dict[str, Any]], budget: int, family: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["family"] == family and r["budget"] == budget]


def best_flat(
    rows: list[dict[str, Any]], budget: int, on: str = "all", prefix: str = ""
) -> dict[str, Any]:
    """The flat configuration with the best recall on slice ``on`` at ``budget`` (only
    chunkers whose name starts with ``prefix``)."""
    candidates = [r for r in rows_at(rows, budget, "flat") if r["name"].startswith(prefix)]
    return max(candidates, key=lambda r: r["slices"][on]["recall"])


def row_named(rows: list[dict[str, Any]], name: str, budget: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["name"] == name and r["budget"] == budget), None)


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def points(value: float) -> str:
    return f"{100 * value:+.2f}"


def bar_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| budget | best flat (all questions) | slice | flat recall | assemble recall | "
        "gain (points) | flat IoU | assemble IoU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for budget in BAR_BUDGETS:
        flat = best_flat(rows, budget)
        mine = row_named(rows, DEFAULT, budget)
        if mine is None:
            continue
        for key, label in SLICES.items():
            f, a = flat["slices"][key], mine["slices"][key]
            out.append(
                f"| {budget} | {flat['name']} (k={flat['k']}) | {label} | {pct(f['recall'])} | "
                f"{pct(a['recall'])} | {points(a['recall'] - f['recall'])} | "
                f"{100 * f['iou']:.2f}% | {100 * a['iou']:.2f}% |"
            )
    return out


def strictest_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| budget | slice | best flat on that slice (k) | its recall | assemble | gain |",
        "|---|---|---|---|---|---|",
    ]
    for budget in BAR_BUDGETS:
        mine = row_named(rows, DEFAULT, budget)
        if mine is None:
            continue
        for key, label in SLICES.items():
            flat = best_flat(rows, budget, on=key)
            f, a = flat["slices"][key]["recall"], mine["slices"][key]["recall"]
            out.append(
                f"| {budget} | {label} | {flat['name']} (k={flat['k']}) | {pct(f)} | {pct(a)} | "
                f"{points(a - f)} |"
            )
    return out


def curve_header() -> list[str]:
    """The head of a table with a column per budget of the curve."""
    return [
        "| strategy | " + " | ".join(str(b) for b in CURVE_BUDGETS) + " |",
        "|---" * (len(CURVE_BUDGETS) + 1) + "|",
    ]


def reading_table(rows: list[dict[str, Any]], names: list[str]) -> list[str]:
    out = curve_header()
    for name in names:
        cells = []
        for budget in CURVE_BUDGETS:
            row = row_named(rows, name, budget)
            cells.append("" if row is None else f"{row['spans']:.1f} / {pct(row['clean_ends'])}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def slices_table(rows: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Recall on each slice, and IoU on all, of each strategy at the bar's budgets."""
    out = [
        "| strategy | budget | recall all | one excerpt | 2+ excerpts | IoU all | spans | "
        "clean ends |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        for budget in BAR_BUDGETS:
            row = row_named(rows, name, budget)
            if row is None:
                continue
            s = row["slices"]
            k = f" (k={row['k']})" if row["k"] is not None else ""
            out.append(
                f"| {name}{k} | {budget} | {pct(s['all']['recall'])} | {pct(s['one']['recall'])} "
                f"| {pct(s['multi']['recall'])} | {100 * s['all']['iou']:.2f}% | "
                f"{row['spans']:.1f} | {pct(row['clean_ends'])} |"
            )
    return out


def curve_table(rows: list[dict[str, Any]], key: str) -> list[str]:
    names = list(dict.fromkeys(r["name"] for r in rows))
    out = curve_header()
    for name in names:
        cells = []
        for budget in CURVE_BUDGETS:
            row = row_named(rows, name, budget)
            if row is None:
                cells.append("")
            else:
                k = f" (k={row['k']})" if row["k"] is not None else ""
                s = row["slices"][key]
                cells.append(f"{pct(s['recall'])} / {100 * s['iou']:.2f}%{k}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def markdown(result: dict[str, Any]) -> str:
    rows = result["rows"]
    count = {key: int(rows[0]["slices"][key]["questions"]) for key in SLICES}
    check = result["onnx_check"]
    out = ["# Retrieval benchmark", ""]
    out.append(
        f"`benches/retrieval.py` on {', '.join(result['corpora'])} ({count['all']} questions: "
        f"{count['one']} with one reference excerpt, {count['multi']} with two or more), "
        "all-MiniLM-L6-v2 (fp32 ONNX graph of the safetensors weights, onnxruntime), exact "
        f"cosine over all corpora at once. Machine: {result['machine']}. Wall time "
        f"{result['seconds']:.0f} s ({result['embedded_now']} texts embedded in this run; "
        f"embedding {result['embed_seconds']:.0f} s of it)."
    )
    out += [
        "",
        f"ONNX against the numpy forward pass, {check['texts']:.0f} texts: least cosine "
        f"{check['min_cosine']:.7f}, largest difference of a component "
        f"{check['max_abs_diff']:.1e}.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()),
        "",
        "## The bar: assemble (defaults) against the best flat configuration",
        "",
        "The best flat configuration of any chunker at each budget, chosen on all questions, "
        "against `assemble` with its defaults on the 1600/400/100 hierarchy, per slice:",
        "",
        *bar_table(rows),
        "",
        "Stricter: against the best flat configuration on each slice itself:",
        "",
        *strictest_table(rows),
        "",
        "## How the contexts read",
        "",
        "Separate spans per context (mean) / share of span ends on a sentence or paragraph end:",
        "",
    ]
    readers = [
        best_flat(rows, budget)["name"] for budget in BAR_BUDGETS if rows_at(rows, budget, "flat")
    ]
    assembled = [r["name"] for r in rows if r["family"] in ("assemble", "hierarchy")]
    out += reading_table(rows, list(dict.fromkeys([*readers, *assembled])))
    out += [
        "",
        "## Leaves cut at boundaries or greedily",
        "",
        '`merge="boundary"` (the default) against `merge="greedy"` leaves, flat (each rule\'s '
        "best size and overlap at the budget) and assembled (1600/400/100 hierarchies whose "
        "parents are cut at boundaries either way):",
        "",
        "| budget | slice | flat boundary | flat greedy | assembled boundary | assembled greedy |",
        "|---|---|---|---|---|---|",
    ]
    for budget in BAR_BUDGETS:
        for key, label in SLICES.items():
            boundary = best_flat(rows, budget, on=key, prefix="spanchunk ")
            greedy = best_flat(rows, budget, on=key, prefix="spanchunk-greedy ")
            a_b = row_named(rows, DEFAULT, budget)
            a_g = row_named(rows, "spanchunk 1600/400/100 greedy leaves assemble", budget)
            if a_b is None or a_g is None:
                continue
            out.append(
                f"| {budget} | {label} | {pct(boundary['slices'][key]['recall'])} "
                f"({boundary['name']}) | {pct(greedy['slices'][key]['recall'])} "
                f"({greedy['name']}) | {pct(a_b['slices'][key]['recall'])} | "
                f"{pct(a_g['slices'][key]['recall'])} |"
            )
    out += [
        "",
        "## Every small-to-big strategy per slice",
        "",
        *slices_table(rows, list(dict.fromkeys(r["name"] for r in rows if r["family"] != "flat"))),
        "",
        "## Reproduction of the report's rows (k = 5)",
        "",
        "| chunker | chunks | recall | IoU (set) | IoU (report's code) | precision | precision_Ω |",
        "|---|---|---|---|---|---|---|",
    ]
    for info in result["flat"]:
        out.append(
            f"| {info['name']} | {info['chunks']} | {info['k5_recall']:.1%} | "
            f"{info['k5_iou']:.2%} | {info['k5_iou_summed']:.2%} | {info['k5_precision']:.2%} | "
            f"{info['omega']:.2%} |"
        )
    for key, label in SLICES.items():
        out += [
            "",
            f"## Every strategy against the context budget: {label} ({count[key]} questions)",
            "",
            "Recall / IoU; flat and k-based strategies use the largest k whose mean context "
            "fits the budget (k in brackets).",
            "",
            *curve_table(rows, key),
        ]
    return "\n".join(out) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    rows = result["rows"]
    figure, axes = plt.subplots(1, 3, figsize=(18, 6))
    names = list(dict.fromkeys(r["name"] for r in rows))
    styles = {
        "flat": {"color": "0.75", "lw": 0.8},
        "hierarchy": {"lw": 1.2, "ls": "--"},
        "peer small-to-big": {"lw": 1.5, "ls": ":"},
        "assemble": {"lw": 2.5},
    }
    for name in names:
        mine = sorted((r for r in rows if r["name"] == name), key=lambda r: r["budget"])
        family = mine[0]["family"]
        label = name if family != "flat" else None
        tokens = [r["tokens"] for r in mine]
        for axis, key in zip(axes, ("all", "multi"), strict=False):
            recall = [100 * r["slices"][key]["recall"] for r in mine]
            axis.plot(tokens, recall, marker=".", label=label, **styles[family])
        axes[2].plot(tokens, [100 * r["iou"] for r in mine], marker=".", **styles[family])
    axes[0].plot([], [], color="0.75", label="flat (every chunker, size, overlap)")
    axes[0].set(xlabel="context sent (mean cl100k tokens)", ylabel="recall %", title="Recall")
    axes[1].set(
        xlabel="context sent (mean cl100k tokens)",
        ylabel="recall %",
        title="Recall, questions with 2+ excerpts",
    )
    axes[2].set(xlabel="context sent (mean cl100k tokens)", ylabel="IoU %", title="IoU")
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
