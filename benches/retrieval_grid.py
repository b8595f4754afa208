"""How ``assemble``'s defaults were chosen: a grid of its settings on ``../shared/eval``.

For every ``spread`` and ``depth`` of the grid, with the leaves searched alone and with the
parents searched too, ``assemble`` on the benchmark's 1600/400/100 hierarchy at the bar's
budgets (1000, 2000, 4000 cl100k tokens), against the best flat configuration of any chunker
at each budget (chosen on all questions, as in the bar). Each setting is scored the way the
bar reads, in recall points summed over the three budgets: first its loss on all questions
(the bar's first clause: never below flat), then its shortfall on the questions with two or
more excerpts (what it misses of +4 points, or of what is left below 100% recall where the
flat configuration is closer than 4 points to it). The defaults are the grid point, with the
leaves searched alone (the way most retrievers are set up), with the least loss on all
questions (to 0.1 point), then the least shortfall, then the higher mean IoU. One grid for
every corpus: nothing is tuned per corpus.

Run after ``retrieval.py`` (it reads the cache that run filled)::

    python benches/retrieval_grid.py [--eval DIR]

Writes ``benches/results/retrieval-grid.md``.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import retrieval as bench_module
import retrieval_report as report
from retrieval_embed import CachedEmbedder

SPREADS = (0.0, 0.2, 0.3, 0.4, 0.5)
DEPTHS = (20, 30, 60)


def grid(eval_dir: Path, spreads: Sequence[float], depths: Sequence[int]) -> dict[str, Any]:
    from spanchunk.retrieval import assemble  # noqa: PLC0415

    started = time.perf_counter()
    corpora, questions = bench_module.load(eval_dir)
    bench = bench_module.Bench(corpora, questions, CachedEmbedder())
    flat: list[dict[str, Any]] = []
    for chunker, size, overlap in bench_module.flat_configs():
        split = bench_module.FLAT_PEERS[chunker](size, overlap)
        spans = [(c.name, a, b) for c in corpora for a, b in split(c.text)]
        found, _ = bench_module.flat_rows(bench, f"{chunker} {size}/{overlap}", spans)
        flat += [row.__dict__ for row in found]
    best = {budget: report.best_flat(flat, budget) for budget in report.BAR_BUDGETS}
    hierarchy = bench_module.spanchunk_hierarchy(bench_module.ASSEMBLED, corpora)
    leaves, store, corpus_of = hierarchy.leaves, hierarchy.store, hierarchy.corpus_of
    searched = {False: leaves, True: leaves + hierarchy.parents}
    hits_by = {}
    for parents, chunks in searched.items():
        top_rows, top_scores = bench.rank([chunk.text for chunk in chunks])
        hits_by[parents] = [
            [(chunks[i], float(s)) for i, s in zip(row, scores, strict=True)]
            for row, scores in zip(top_rows, top_scores, strict=True)
        ]
    points = []
    for parents, spread, depth in itertools.product((False, True), spreads, depths):
        result: dict[str, Any] = {
            "parents": parents,
            "spread": spread,
            "depth": depth,
            "budgets": {},
        }
        losses, shortfalls, ious = [], [], []
        for budget in report.BAR_BUDGETS:
            pieces, tokens = [], []
            for hits in hits_by[parents]:
                spans = assemble(hits, store, budget, spread=spread, depth=depth)
                pieces.append([(corpus_of[s.document_id], s.start_char, s.end_char) for s in spans])
                tokens.append(sum(s.size for s in spans))
            row = bench_module.make_row(
                bench, "assemble", "grid", budget, bench_module.Context(pieces, tokens)
            )
            flat_slices = best[budget]["slices"]
            gain = {k: row.slices[k]["recall"] - flat_slices[k]["recall"] for k in report.SLICES}
            target = min(0.04, 1.0 - flat_slices["multi"]["recall"])
            losses.append(max(0.0, -gain["all"]))
            shortfalls.append(max(0.0, target - gain["multi"]))
            ious.append(row.iou - flat_slices["all"]["iou"])
            result["budgets"][budget] = {
                "gain": gain,
                "iou_gain": row.iou - flat_slices["all"]["iou"],
                "spans": row.spans,
                "clean_ends": row.clean_ends,
            }
        result["loss"] = sum(losses)
        result["shortfall"] = sum(shortfalls)
        result["iou_gain"] = sum(ious) / len(ious)
        points.append(result)
        print(
            f"parents {parents} spread {spread} depth {depth}: "
            f"loss {100 * result['loss']:.2f}, shortfall {100 * result['shortfall']:.1f}",
            flush=True,
        )
    chosen = max(
        (p for p in points if not p["parents"]),
        key=lambda p: (-round(p["loss"], 3), -round(p["shortfall"], 4), p["iou_gain"]),
    )
    return {
        "points": points,
        "chosen": chosen,
        "best_flat": {b: r["name"] for b, r in best.items()},
        "seconds": time.perf_counter() - started,
    }


def markdown(found: dict[str, Any]) -> str:
    out = [
        "# assemble's settings on the benchmark (`benches/retrieval_grid.py`)",
        "",
        "Recall gain in points over the best flat configuration at each budget (all questions "
        "/ 2+ excerpts), mean IoU gain over the three budgets, the loss on all questions and "
        "the shortfall on the 2+ excerpts (recall points missing from the bar, summed over "
        "the budgets; 0 and 0 meet it). "
        f"Best flat: {', '.join(f'{b}: {n}' for b, n in found['best_flat'].items())}. "
        f"{found['seconds']:.0f} s.",
        "",
        "| parents searched | spread | depth | "
        + " | ".join(f"{b} all / 2+" for b in report.BAR_BUDGETS)
        + " | IoU gain | loss (all) | shortfall (2+) | spans at 2000 |",
        "|---|---|---|" + "---|" * (len(report.BAR_BUDGETS) + 4),
    ]
    for p in found["points"]:
        cells = [
            f"{100 * p['budgets'][b]['gain']['all']:+.1f} / "
            f"{100 * p['budgets'][b]['gain']['multi']:+.1f}"
            for b in report.BAR_BUDGETS
        ]
        chosen = " **(default)**" if p is found["chosen"] else ""
        out.append(
            f"| {'yes' if p['parents'] else 'no'} | {p['spread']} | {p['depth']}{chosen} | "
            + " | ".join(cells)
            + f" | {100 * p['iou_gain']:+.2f} | {100 * p['loss']:.2f} | "
            f"{100 * p['shortfall']:.1f} | {p['budgets'][2000]['spans']:.1f} |"
        )
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--eval", type=Path, default=bench_module.HERE.parents[1] / "shared" / "eval"
    )
    parser.add_argument("--out", type=Path, default=bench_module.HERE / "results")
    args = parser.parse_args(argv)
    found = grid(args.eval, SPREADS, DEPTHS)
    (args.out / "retrieval-grid.md").write_text(markdown(found))
    chosen = found["chosen"]
    print(f"chosen: spread {chosen['spread']}, depth {chosen['depth']}")


if __name__ == "__main__":
    main()
