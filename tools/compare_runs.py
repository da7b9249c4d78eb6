"""Two `kbapp eval --per-query --json` reports of one golden set side by side: how many
questions kept their rank and gate state (the storage backends, two indexings).

    python3 tools/compare_runs.py A.json B.json
"""

import json
import sys
from pathlib import Path


def main() -> None:
    a, b = (json.loads(Path(p).read_text())["per_query"] for p in sys.argv[1:3])
    qa, qb = {r["id"]: r for r in a}, {r["id"]: r for r in b}
    ids = sorted(set(qa) & set(qb))
    same_rank = sum(qa[i]["rank"] == qb[i]["rank"] for i in ids)
    same_state = sum(qa[i]["state"] == qb[i]["state"] for i in ids)
    dense = max(abs((qa[i]["top_dense"] or 0) - (qb[i]["top_dense"] or 0)) for i in ids)
    moved = [(i, qa[i]["rank"], qb[i]["rank"]) for i in ids if qa[i]["rank"] != qb[i]["rank"]]
    print(json.dumps({"questions": len(ids), "same_rank": same_rank, "same_state": same_state,
                      "max_top_dense_difference": round(dense, 4),
                      "better_in_b": sum(1 for _, x, y in moved if (y or 99) < (x or 99)),
                      "worse_in_b": sum(1 for _, x, y in moved if (y or 99) > (x or 99)),
                      "moved": moved[:20]}, indent=1))


if __name__ == "__main__":
    main()
