"""Print the full-size glue_e2e table of docs/results.md ("Speed against run_glue with the same sampler") from
benchmarks/results.json: one row per task and seed, the sides' whole-process times ("—" for a side not run), ours'
ratio against each run_glue side, each side's step-only limit and whole/limit, train padding, and the time outside
the timed steps.

    python tools/glue_e2e_table.py [benchmarks/results.json] [--labels full_mrpc,full_mrpc_seed43,...]
"""

import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SIDES = {
    "pad128": "--pad_to_max_length True",
    "dyn": "--pad_to_max_length False (dynamic",
    "group": "group_by_length",
    "ours": "ours:",
}
NAMES = {"mrpc": "MRPC", "stsb": "STS-B", "cola": "CoLA", "rte": "RTE"}
LABELS = "full_mrpc,full_mrpc_seed43,full_stsb,full_stsb_seed43,full_cola,full_cola_seed43"


def side_of(name: str) -> str:
    return next(key for key, needle in SIDES.items() if needle in name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="?", default=os.path.join(HERE, "..", "benchmarks", "results.json"))
    parser.add_argument("--labels", default=LABELS)
    args = parser.parse_args()
    with open(args.results, encoding="utf-8") as f:
        stored = json.load(f)["benchmarks"]
    print(
        "| task (seed) | run_glue pad-128 | run_glue dynamic | run_glue + same sampler | ours | ours vs pad-128 / "
        "dynamic / same sampler | step-only limit: same sampler / ours | whole / limit: same sampler / ours | "
        "train padding: same sampler / ours | outside the steps: same sampler / ours | commit |"
    )
    print("|---|---:|---:|---:|---:|---|---|---|---|---|---|")
    for label in args.labels.split(","):
        entry = stored[f"glue_e2e[{label}]"]
        result = entry["results"][0]
        sides = {side_of(name): side for name, side in result["sides"].items()}
        extra = {key: side["extra"][0] for key, side in sides.items()}
        whole = {key: side["median_s"] for key, side in sides.items()}
        limit = {key: extra[key]["step_limit_s"] for key in sides}
        pad = {
            key: 100 * (1 - extra[key]["tokens"]["train"]["real"] / extra[key]["tokens"]["train"]["positions"])
            for key in sides
        }
        seed = result["config"]["seeds"][0]
        # a side not run (``--sides group,ours``) shows as "—"
        ratios = " / ".join(
            f"{whole[k] / whole['ours']:.2f}x" if k in whole else "—" for k in ("pad128", "dyn", "group")
        )
        pad128, dyn = (f"{whole[k]:.1f} s" if k in whole else "—" for k in ("pad128", "dyn"))
        print(
            f"| {NAMES[result['config']['task']]} ({seed}) | {pad128} | {dyn} | "
            f"{whole['group']:.1f} s | {whole['ours']:.1f} s | {ratios} | {limit['group']:.1f} s / "
            f"{limit['ours']:.1f} s | {whole['group'] / limit['group']:.2f} / {whole['ours'] / limit['ours']:.2f} | "
            f"{pad['group']:.1f} % / {pad['ours']:.1f} % | {whole['group'] - limit['group']:.1f} s / "
            f"{whole['ours'] - limit['ours']:.1f} s | `{entry['commit'][:7]}` |"
        )


if __name__ == "__main__":
    main()
