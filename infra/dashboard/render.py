#!/usr/bin/env python3
"""Draws the layout of the environment's CloudWatch dashboard (template.yaml, McpDashboard) as
an SVG: each widget at its x, y, width and height on the dashboard's 24-column grid, with its
title and, for each metric it shows, the statistic, the metric, the dimension set it reads and
what makes one line (route, tool). infra/README.md shows the picture.

    python3 infra/dashboard/render.py           # writes infra/dashboard/dashboard.svg
    python3 infra/dashboard/render.py --check   # exit 1 when dashboard.svg is not what it draws now
    python3 infra/dashboard/render.py --stdout  # prints the SVG

Standard library only: it reads the `DashboardBody: !Sub |` block of template.yaml as text,
puts placeholders for the Fn::Sub variables (<stack>, <region>, <namespace>) and parses the
JSON. infra/check_template.py (infra/lint.sh, CI) runs the --check, and compares the widgets read
here with the body as CloudFormation renders it, so that the committed picture cannot drift from
the template.
"""

import html
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TEMPLATE = os.path.join(ROOT, "template.yaml")
SVG = os.path.join(HERE, "dashboard.svg")

# What the Fn::Sub variables of the body stand for in the picture.
PLACEHOLDERS = {
    "AWS::StackName": "<stack>",
    "AWS::Region": "<region>",
    "MetricsNamespace": "<namespace>",
}
# Pixels of one grid unit (CloudWatch dashboards are 24 columns wide), the margin, the caption.
COLUMN = 40
ROW = 28
MARGIN = 16
CAPTION = 46
GAP = 4
# Approximate advance of one character: titles (13 px sans, bold), metric lines (11 px monospace),
# notes (11 px sans).
TITLE_CHAR = 7.4
MONO_CHAR = 6.7
NOTE_CHAR = 6.0

MI_QUERY = re.compile(
    r'SELECT (?P<function>\w+)\((?P<metric>\w+)\) FROM SCHEMA\("[^"]*"(?P<dimensions>(?:, \w+)*)\)'
    r"(?: WHERE (?P<where>.+?))?(?: GROUP BY (?P<group>\w+(?:, \w+)*))?"
    r"(?: ORDER BY \w+\(\) (?:ASC|DESC))?(?: LIMIT (?P<limit>\d+))?$"
)
SEARCH = re.compile(
    r"""SEARCH\('\{"[^"]*"(?P<dimensions>(?:,\w+)*)\}(?P<terms>(?: \w+="[^"]*")*)', """
    r"""'(?P<stat>[\w.]+)', (?P<period>\d+)\)$"""
)
TERM = re.compile(r'(\w+)="([^"]*)"')


def body_text(path=TEMPLATE):
    """The DashboardBody block scalar of the template, dedented, as CloudFormation's Fn::Sub
    source."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    starts = [i for i, line in enumerate(lines) if re.fullmatch(r"\s*DashboardBody: !Sub \|", line)]
    if len(starts) != 1:
        raise SystemExit(f"{path}: expected one `DashboardBody: !Sub |` block, found {len(starts)}")
    start = starts[0]
    indent = len(lines[start]) - len(lines[start].lstrip())
    block = []
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    depth = min(len(line) - len(line.lstrip()) for line in block if line.strip())
    return "\n".join(line[depth:] for line in block).strip() + "\n"


def substitute(text):
    """Fn::Sub with placeholders: ${!X} is the literal ${X}, ${Name} its placeholder."""

    def one(match):
        if match.group(1):
            return "${" + match.group(2) + "}"
        return PLACEHOLDERS.get(match.group(2), f"<{match.group(2)}>")

    return re.sub(r"\$\{(!?)([^}]+)\}", one, text)


def widgets(path=TEMPLATE):
    """The dashboard's widgets, as dicts of the body's JSON (placeholders for the variables)."""
    return json.loads(substitute(body_text(path)))["widgets"]


def describe(entry):
    """Lines that say what one entry of a widget's `metrics` shows."""
    if isinstance(entry, list) and len(entry) == 1 and isinstance(entry[0], dict):
        expression = entry[0].get("expression", "")
        query = MI_QUERY.match(expression)
        if query:
            dimensions = [d.strip() for d in query["dimensions"].split(",") if d.strip()]
            head = f"{query['function']}({query['metric']})"
            if query["where"]:
                head += f" where {query['where']}"
            per = query["group"] or "all"
            tail = f"[{', '.join(dimensions)}] · a line per {per}"
            if query["limit"]:
                tail += f", top {query['limit']}"
            return [head, tail, "Metrics Insights"]
        search = SEARCH.match(expression)
        if search:
            dimensions = [d for d in search["dimensions"].split(",") if d]
            terms = dict(TERM.findall(search["terms"]))
            metric = terms.pop("MetricName", "?")
            head = f"{search['stat']}({metric})"
            if terms:
                head += " where " + " and ".join(f"{k}={v!r}" for k, v in terms.items())
            per = ", ".join(d for d in dimensions if d not in terms) or "all"
            return [head, f"[{', '.join(dimensions)}] · a line per {per}", "SEARCH"]
        return [expression]
    if isinstance(entry, list):
        names = [e for e in entry if isinstance(e, str)]
        options = next((e for e in entry if isinstance(e, dict)), {})
        if len(names) >= 2:
            pairs = ", ".join(f"{k}={v}" for k, v in zip(names[2::2], names[3::2]))
            return [f"{options.get('stat', 'Average')}({names[1]})", f"[{pairs}]"]
    return [json.dumps(entry)]


def wrap(text, width, char):
    """Lines of at most `width` pixels, broken at spaces (or anywhere in a long word)."""
    room = max(1, int(width // char))
    lines, line = [], ""
    for word in text.split(" "):
        while len(word) > room:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:room])
            word = word[room:]
        candidate = f"{line} {word}" if line else word
        if len(candidate) <= room:
            line = candidate
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def fit(lines, room):
    """At most `room` lines, the last one ending in an ellipsis when some were cut."""
    if len(lines) <= room:
        return lines
    kept = lines[: max(room, 0)]
    if kept:
        kept[-1] = kept[-1][:-1] + "…" if len(kept[-1]) > 1 else "…"
    return kept


def text(x, y, content, size=11, weight=None, fill="#16191f", family=None, anchor=None):
    attributes = [f'x="{x}"', f'y="{y}"', f'font-size="{size}"']
    if weight:
        attributes.append(f'font-weight="{weight}"')
    if fill != "#16191f":
        attributes.append(f'fill="{fill}"')
    if family:
        attributes.append(f'font-family="{family}"')
    if anchor:
        attributes.append(f'text-anchor="{anchor}"')
    return f"<text {' '.join(attributes)}>{html.escape(content, quote=False)}</text>"


def draw(items):
    """The SVG of the widgets' layout."""
    rows = max(w["y"] + w["height"] for w in items)
    width = 2 * MARGIN + 24 * COLUMN
    height = CAPTION + rows * ROW + 2 * MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        text(
            MARGIN,
            MARGIN + 16,
            "CloudWatch dashboard <stack>-routes (template.yaml, McpDashboard): layout",
            size=16,
            weight="bold",
        ),
        text(
            MARGIN,
            MARGIN + 34,
            "24-column grid; each box is a widget at its x, y, width and height, with the "
            "statistic(metric), the dimension set it reads and what one line is. Drawn by "
            "infra/dashboard/render.py.",
            size=11,
            fill="#545b64",
        ),
    ]
    top = MARGIN + CAPTION
    for widget in sorted(items, key=lambda w: (w["y"], w["x"])):
        props = widget.get("properties", {})
        x = MARGIN + widget["x"] * COLUMN + GAP
        y = top + widget["y"] * ROW + GAP
        w = widget["width"] * COLUMN - 2 * GAP
        h = widget["height"] * ROW - 2 * GAP
        out.append(
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="4" fill="#fafafa" '
            f'stroke="#aab7b8"/>'
        )
        inner = w - 20
        line_y = y + 20
        room = (h - 34) // 14
        if widget.get("type") == "text":
            markdown = props.get("markdown", "").split("\n")
            heading = markdown[0].lstrip("#").strip().replace("`", "")
            out.append(text(x + 10, line_y, fit(wrap(heading, inner, TITLE_CHAR), 1)[0], size=13, weight="bold"))
            body = " ".join(markdown[1:]).replace("`", "")
            for line in fit(wrap(body, inner, NOTE_CHAR), room):
                line_y += 14
                out.append(text(x + 10, line_y, line, fill="#545b64"))
        else:
            title = props.get("title", "(no title)")
            for line in fit(wrap(title, inner, TITLE_CHAR), 2):
                out.append(text(x + 10, line_y, line, size=13, weight="bold"))
                line_y += 16
            lines = []
            for entry in props.get("metrics", []):
                head, *rest = describe(entry)
                lines += [(line, "#0f5e9c") for line in wrap(head, inner, MONO_CHAR)]
                lines += [(line, "#545b64") for part in rest for line in wrap(part, inner, MONO_CHAR)]
            for line, fill in fit(lines, room - 1):
                line_y += 2
                out.append(text(x + 10, line_y, line, fill=fill, family="Menlo, Consolas, monospace"))
                line_y += 12
            axis = props.get("yAxis", {}).get("left", {}).get("label")
            note = f"{props.get('view', 'timeSeries')}, period {props.get('period', 300)} s"
            if axis:
                note += f", y: {axis}"
            out.append(text(x + 10, y + h - 8, note, size=10, fill="#879596"))
        out.append(
            text(
                x + w - 8,
                y + h - 8,
                f"x {widget['x']} y {widget['y']} · {widget['width']}×{widget['height']}",
                size=10,
                fill="#879596",
                anchor="end",
            )
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    svg = draw(widgets())
    if argv == ["--stdout"]:
        sys.stdout.write(svg)
        return 0
    if argv == ["--check"]:
        try:
            with open(SVG, encoding="utf-8") as f:
                committed = f.read()
        except FileNotFoundError:
            committed = None
        if committed != svg:
            print(
                f"{os.path.relpath(SVG, ROOT)} is not the layout of template.yaml's dashboard: "
                "run python3 infra/dashboard/render.py and commit the result",
                file=sys.stderr,
            )
            return 1
        print(f"{os.path.relpath(SVG, ROOT)}: the dashboard's layout as template.yaml has it")
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    with open(SVG, "w", encoding="utf-8") as f:
        f.write(svg)
    print(f"wrote {os.path.relpath(SVG, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
