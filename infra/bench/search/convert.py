#!/usr/bin/env python3
"""Build dataset.json (tool-retrieval evaluation set) from a checkout of MetaTool.

Source: https://github.com/HowieHwong/MetaTool (MIT), the ToolE dataset.

Usage:
    python3 convert.py SOURCE_DIR COMMIT [--out PATH]

SOURCE_DIR is a checkout of the source at COMMIT (COMMIT is written into the
output; when SOURCE_DIR is a git work tree and git is installed, its HEAD must
equal COMMIT). The output defaults to dataset.json next to this script.
Standard library only.

Reads (paths relative to SOURCE_DIR):
  dataset/plugin_des.json                   object: tool name -> description (the tool set)
  dataset/data/all_clean_data.csv           CSV with header "Query,Tool": single-tool queries
  dataset/data/multi_tool_query_golden.json list of {"query": str, "tool": [str, ...]}:
                                            multi-tool queries

Conversion rules:
  Tools (every entry of plugin_des.json, in file order):
    1. Name: each character outside [A-Za-z0-9_.-] becomes "_"; runs of "_"
       collapse to one; leading and trailing "_" are removed ("tool" if nothing
       is left); the result is cut to 64 characters.
    2. Collisions: a name equal, ignoring case, to an earlier converted name
       gets the suffix "_2", "_3", ... (first free one), the base being cut so
       the whole stays within 64 characters.
    3. Description: the source text with surrounding whitespace removed, cut
       to 1,000 characters (then trailing whitespace removed).
  Queries (CSV rows in file order, then the JSON list in file order):
    4. Text: the source text with surrounding whitespace removed; otherwise
       unchanged. Empty texts and texts containing a line break (malformed
       merged source rows) are dropped.
    5. Gold: the source tool name(s) converted with rules 1-2 (through the
       tool table), in source order, repeats removed. A query whose gold tool
       is missing from the tool set is dropped.
    6. Duplicates: texts are compared exactly (after rule 4) across both files.
       If every occurrence of a text has the same gold set, the first
       occurrence is kept; if occurrences disagree, all of them are dropped.
    7. Subset: the single-tool pool (from the CSV) and the multi-tool pool
       (from the JSON) are each reduced, in source order, to evenly spaced
       items: for a pool of n items and a quota m, the items at positions
       floor(i * n / m) for i = 0 .. m-1 (the whole pool when n <= m).
       Quotas: 1,600 single-tool and 400 multi-tool queries. The output lists
       the selected single-tool queries first, then the multi-tool ones.
  Output: JSON, UTF-8, ensure_ascii=False, separators (",", ":"), trailing newline.
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys

SOURCE_URL = "https://github.com/HowieHwong/MetaTool"
LICENCE = "MIT"
LICENCE_NOTE = (
    "MIT License, Copyright (c) 2023 Yue Huang; the notice travels with the data "
    "in LICENSE.MetaTool. Data: the ToolE dataset of the MetaTool benchmark "
    "(Huang et al., 'MetaTool Benchmark: Deciding Whether to Use Tools and Which "
    "to Use', arXiv:2310.03128). Tool descriptions are the MetaTool authors' "
    "texts derived from ChatGPT plugin store metadata; queries were generated "
    "with ChatGPT/GPT-4 and checked by the MetaTool authors. Converted and "
    "subsampled; see README.md."
)

TOOLS_FILE = "dataset/plugin_des.json"
SINGLE_FILE = "dataset/data/all_clean_data.csv"
MULTI_FILE = "dataset/data/multi_tool_query_golden.json"

MAX_NAME = 64
MAX_DESC = 1000
SINGLE_QUOTA = 1600
MULTI_QUOTA = 400

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def base_name(raw):
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", raw)
    name = re.sub(r"_+", "_", name).strip("_")
    return (name or "tool")[:MAX_NAME]


def convert_tools(source):
    """Returns (tools list, mapping source name -> converted name)."""
    mapping = {}
    taken = set()
    tools = []
    for raw, desc in source.items():
        name = base_name(raw)
        if name.lower() in taken:
            k = 2
            while True:
                suffix = "_%d" % k
                cand = name[: MAX_NAME - len(suffix)] + suffix
                if cand.lower() not in taken:
                    name = cand
                    break
                k += 1
        taken.add(name.lower())
        mapping[raw] = name
        tools.append({"name": name, "description": desc.strip()[:MAX_DESC].rstrip()})
    return tools, mapping


def evenly(items, quota):
    n = len(items)
    if n <= quota:
        return list(items)
    return [items[i * n // quota] for i in range(quota)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source_dir")
    ap.add_argument("commit")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataset.json"))
    args = ap.parse_args()
    src = args.source_dir

    if os.path.exists(os.path.join(src, ".git")):
        try:
            head = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True,
                                  text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            head = None
        if head is not None and head != args.commit:
            sys.exit("checkout is at %s, not %s" % (head, args.commit))

    with open(os.path.join(src, TOOLS_FILE), encoding="utf-8") as f:
        tools, mapping = convert_tools(json.load(f))

    raw = []  # (text, [source tool names], pool)
    with open(os.path.join(src, SINGLE_FILE), encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header[:2] != ["Query", "Tool"]:
            sys.exit("unexpected CSV header %r" % header)
        for row in reader:
            raw.append((row[0], [row[1]], "single"))
    with open(os.path.join(src, MULTI_FILE), encoding="utf-8") as f:
        for item in json.load(f):
            raw.append((item["query"], list(item["tool"]), "multi"))

    stats = {"read": len(raw), "empty_or_linebreak": 0, "unknown_gold": 0}
    cleaned = []
    for text, gold_src, pool in raw:
        text = text.strip()
        if not text or "\n" in text or "\r" in text:
            stats["empty_or_linebreak"] += 1
            continue
        if any(g not in mapping for g in gold_src):
            stats["unknown_gold"] += 1
            continue
        gold = []
        for g in gold_src:
            if mapping[g] not in gold:
                gold.append(mapping[g])
        cleaned.append((text, gold, pool))

    golds_by_text = {}
    for text, gold, _ in cleaned:
        golds_by_text.setdefault(text, set()).add(frozenset(gold))
    seen = set()
    pools = {"single": [], "multi": []}
    stats["duplicate"] = stats["conflicting"] = 0
    for text, gold, pool in cleaned:
        if len(golds_by_text[text]) > 1:
            stats["conflicting"] += 1
            continue
        if text in seen:
            stats["duplicate"] += 1
            continue
        seen.add(text)
        pools[pool].append({"query": text, "gold": gold})

    queries = evenly(pools["single"], SINGLE_QUOTA) + evenly(pools["multi"], MULTI_QUOTA)

    names = [t["name"] for t in tools]
    assert len(set(n.lower() for n in names)) == len(names)
    assert all(NAME_RE.match(n) for n in names)
    assert all(g in set(names) for q in queries for g in q["gold"])

    out = {
        "source": SOURCE_URL,
        "commit": args.commit,
        "licence": LICENCE,
        "licence_note": LICENCE_NOTE,
        "tools": tools,
        "queries": queries,
    }
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(out, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    print("tools %d; queries read %d, dropped: empty/line break %d, unknown gold %d, "
          "conflicting %d, duplicate %d; pools single %d, multi %d; written %d"
          % (len(tools), stats["read"], stats["empty_or_linebreak"], stats["unknown_gold"],
             stats["conflicting"], stats["duplicate"], len(pools["single"]),
             len(pools["multi"]), len(queries)), file=sys.stderr)


if __name__ == "__main__":
    main()
