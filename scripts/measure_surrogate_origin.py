#!/usr/bin/env python
"""How often a name's surrogate keeps the name's apparent origin (README: surrogate/README.md).

    python scripts/measure_surrogate_origin.py [--data-dir DIR] [--per-group 40] [--json]

1. UN region, on the labelled dev names: for every gold NAME of mathdial (each dialogue names its
   student's region in ``meta.region``), the surrogate's first name is classified by the shipped
   tables (names-dataset); the share in the same region as the gold one is reported, next to the
   share of the originals the tables put there (the ceiling of what the tables can preserve).
2. Language / country group: for each group of ``surrogate/origin.py``, ``--per-group`` people
   drawn from that group's lists (a first name and a last name, seeded); the share whose surrogate
   is judged to be of the same group by ``Origins.person_group``. The judge uses the same lists the
   surrogates are drawn from, so this measures what the replacer preserves, not how well the lists
   describe real names.
Surrogates use a fixed secret and one session per dialogue / person.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None, help="dev data directory (default: the eval default)")
    ap.add_argument("--per-group", type=int, default=40)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from plainsight.middleware.evaluation import default_data_dir
    from plainsight.surrogate.names import load_tables
    from plainsight.surrogate.origin import UNSPACED, load_origins
    from plainsight.surrogate.replacer import SurrogateReplacer

    tables = load_tables()
    origins = load_origins()
    rep = SurrogateReplacer("measure-origin-secret")
    data = Path(args.data_dir) if args.data_dir else default_data_dir()

    # 1. UN region on mathdial gold names
    same = known = total = orig_same = 0
    for line in (data / "mathdial.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        region = (d.get("meta") or {}).get("region")
        if not region:
            continue
        st = rep.new_state(d["id"])
        for s in d.get("spans") or []:
            if s["label"] != "NAME":
                continue
            value = s.get("text") or d["turns"][s["turn"]]["text"][s["start"] : s["end"]]
            total += 1
            info = tables.classify(value.split()[0])
            orig_same += bool(info and info.region == region)
            sur = rep.surrogate_for(value, "NAME", st).split()[0]
            sinfo = tables.classify(sur)
            if sinfo is not None:
                known += 1
                same += sinfo.region == region
    region_res = {"names": total, "surrogate_same_region": round(same / max(total, 1), 3),
                  "surrogates_classified": known, "original_same_region_by_tables": round(orig_same / max(total, 1), 3)}

    # 2. language / country group
    rng = random.Random(args.seed)
    per: dict[str, Counter] = {}
    for group, p in sorted(origins.pools.items()):
        firsts = [n for n in (*p["F"], *p["M"]) if n.isalpha()]
        lasts = [n for n in p["L"] if n.isalpha()]
        if len(firsts) < 20 or len(lasts) < 20:
            continue
        c = per.setdefault(group, Counter())
        for i in range(args.per_group):
            first, last = rng.choice(firsts), rng.choice(lasts)
            if (origins.group_of(last + first) if group in UNSPACED else origins.person_group(first, last)) != group:
                c["original_not_group"] += 1
                continue
            value = last + first if group in UNSPACED else f"{first} {last}"  # "王伟": surname first, no space
            sur = rep.surrogate_for(value, "NAME", rep.new_state(f"{group}-{i}")).split()
            got = origins.group_of(sur[0]) if group in UNSPACED else origins.person_group(sur[0], sur[-1] if len(sur) > 1 else None)
            c["n"] += 1
            c["same"] += got == group
            c["none"] += got is None
    n = sum(c["n"] for c in per.values())
    group_res = {
        "people": n,
        "surrogate_same_group": round(sum(c["same"] for c in per.values()) / max(n, 1), 3),
        "surrogate_no_group": round(sum(c["none"] for c in per.values()) / max(n, 1), 3),
        "per_group": {g: round(c["same"] / max(c["n"], 1), 2) for g, c in per.items()},
    }
    out = {"un_region_mathdial": region_res, "language_group": group_res}
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"UN region (mathdial gold names, {total}): surrogate in the same region {region_res['surrogate_same_region']:.1%}"
              f" (originals the tables put there: {region_res['original_same_region_by_tables']:.1%})")
        print(f"language/country group ({n} people, {len(per)} groups): surrogate of the same group "
              f"{group_res['surrogate_same_group']:.1%}, of no group {group_res['surrogate_no_group']:.1%}")
        for g, v in group_res["per_group"].items():
            print(f"  {g:18s} {v:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
