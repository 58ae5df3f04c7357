"""A big fresh folder while its vectors fill in, as an agent meets it.

    python bench/filling.py [--pages 1000] [--minutes 3] [--model default] [--json out.json]

A fresh memo-mcp (`--model`, named as bench/costs.py names models: memo's default,
installed) over a fresh copy of `--pages` office-dev-ru pages: `memo_search` every 2 s for
`--minutes` (or until an answer carries no notice): each call's seconds and the notice's
first line. Then the server is killed (SIGKILL) in the middle of its passes and a new one is
asked once: where its notice starts, beside the last count the first one said (a restart
goes on from the last committed step).
"""

from __future__ import annotations

import argparse
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import costs  # noqa: E402
from _floor import INITIALIZE  # noqa: E402

COUNT = re.compile(r"(\d+) из (\d+)")


def notice(text: str) -> str:
    """An answer's notice line ("" for none)."""
    return text.split("\n", 1)[0] if text.startswith("(") else ""


def count(line: str) -> int | None:
    """How many a notice says are done (0: "none yet"), or None (no count in it)."""
    if m := COUNT.search(line):
        return int(m.group(1))
    return 0 if "пока нет ни у одного" in line else None


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--pages", type=int, default=1000)
    p.add_argument("--minutes", type=float, default=3.0)
    p.add_argument("--model", default="default")
    p.add_argument("--data", type=Path, default=costs.DATA)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    files = costs.sample(args.data, args.pages)
    out: dict = {"engine": C.engine_version(), "pages": len(files), "calls": []}
    print(f"engine {out['engine']}; {len(files)} pages of {args.data.name}")
    with tempfile.TemporaryDirectory(prefix="memo-filling-") as tmp:
        work = Path(tmp)
        folder = costs.copy_of(files, work / "notes")
        env = costs.env_of(args.model, MEMO_ROOTS=str(work), MEMO_LANG="ru")
        with open(work / "stderr-1", "w") as log:
            s = C.Stdio(env, stderr=log)
            s.call("initialize", INITIALIZE["params"])  # type: ignore[arg-type]
            t0, last = time.perf_counter(), ""
            while time.perf_counter() - t0 < args.minutes * 60:
                query = costs.QUERIES[len(out["calls"]) % len(costs.QUERIES)]
                took, text = s.tool("memo_search", {"path": str(folder), "query": query})
                last = notice(text)
                out["calls"].append({"at_s": round(time.perf_counter() - t0, 1),
                                     "took_s": round(took, 2), "notice": last})  # fmt: skip
                print(f"{time.perf_counter() - t0:6.1f} s  {took:5.2f} s  {last}", flush=True)
                if not last:
                    break
                time.sleep(2)
            s.proc.send_signal(signal.SIGKILL)
            s.proc.wait(30)
        with open(work / "stderr-2", "w") as log:
            s = C.Stdio(env, stderr=log)
            s.call("initialize", INITIALIZE["params"])  # type: ignore[arg-type]
            took, text = s.tool("memo_search", {"path": str(folder), "query": costs.QUERIES[0]})
            s.close()
        after = notice(text)
        out["restart"] = {"before": last, "after": after, "took_s": round(took, 2)}
        print(f"killed at: {last or '(complete)'}\nnew server: {after or '(complete)'} "
              f"({took:.2f} s)")  # fmt: skip
        words_in = [c for c in out["calls"] if c["notice"] and "индексация" not in c["notice"]]
        if words_in:
            secs = [c["took_s"] for c in words_in]
            out["after_words"] = {"searches": len(secs), "median_s": statistics.median(secs),
                                  "max_s": max(secs)}  # fmt: skip
            print(f"once the words were in: {len(secs)} searches, median "
                  f"{statistics.median(secs):.2f} s, max {max(secs):.2f} s")  # fmt: skip
        b, a = count(last), count(after)
        if b is not None and a is not None:
            print(f"the new server starts from {a}, the killed one had said {b}")
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
