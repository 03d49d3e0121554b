#!/usr/bin/env python3
"""scripts/reference-roff.py [FILE]: docs/REFERENCE.md (or FILE) as the DETAILS section of
monsoon(1), in mdoc, on standard output. `make install-files` appends it to the page
`monsoon completions man` writes, so the installed page is the complete reference without
the reference living in Swift strings.

It reads the markdown subset REFERENCE.md uses: `##` and `###` headings, paragraphs, `-`
lists nested by indentation, fenced code, pipe tables, `code`, **bold** and [links](...).
Everything before the first `##` (the title and the contents) is left out.
"""
import re
import sys


def escape(text):
    """As ManualGenerator.text: roff's escape character, hyphens as `\\-` (so options copied
    from the page are ASCII), and other characters than ASCII by name, whatever encoding man
    assumes."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(ch if ord(ch) < 128 else "\\[u%04X]" % ord(ch) for ch in text)


def inline(text):
    """A line of markdown as roff text: code and bold in bold, a link as its text."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    parts = text.split("`")
    for index, part in enumerate(parts):
        part = escape(part)
        parts[index] = "\\fB" + part + "\\fR" if index % 2 else re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", part)
    return "".join(parts)


def line(text):
    """A text line that roff never takes for a request."""
    text = inline(text.strip())
    return "\\&" + text if text.startswith((".", "'")) else text


def quoted(text):
    """A macro's argument, quoted so that no word of it is taken for a macro."""
    return '"' + inline(text.strip()).replace('"', "\\(dq") + '"'


def cells(row):
    return [cell.strip() for cell in row.strip().strip("|").split(" | ")]


def table(rows):
    """A pipe table as a tagged list: the first cell is the tag; with two columns, the heading
    is the first item; with more, the other cells one a line, each after its column's heading."""
    header, body = cells(rows[0]), [cells(row) for row in rows[2:]]
    body = [header] + body if len(header) == 2 else body
    out = [".Bl -tag -width Ds"]
    for row in body:
        out.append(".It " + quoted(row[0]))
        if len(row) == 2:
            out.append(line(row[1]))
        else:
            for index, cell in enumerate(row[1:], 1):
                out += ([".br"] if index > 1 else []) + [line(header[index] + ": " + cell)]
    return out + [".El"]


def convert(markdown):
    out = [".Sh DETAILS"]
    lists = []  # the indentation of each open list's bullets
    gap = False  # a blank line since the last text
    fresh = True  # at the start of a section or an item: no paragraph break wanted
    source = markdown.split("\n")
    while source and not source[0].startswith("## "):
        source.pop(0)
    index = 0

    def close(indent):
        while lists and lists[-1] >= indent:
            lists.pop()
            out.append(".El")

    while index < len(source):
        text = source[index]
        indent = len(text) - len(text.lstrip(" "))
        stripped = text.strip()
        index += 1
        if not stripped:
            gap = True
            continue
        if stripped.startswith("#"):
            close(0)
            level, title = stripped.split(" ", 1)
            out += [".Ss " + quoted(title)] if level == "##" else [".Pp", ".Sy " + quoted(title)]
            gap, fresh = False, level == "##"
            continue
        if stripped.startswith("- "):
            close(indent + 1)
            if not lists or lists[-1] < indent:
                lists.append(indent)
                out.append(".Bl -bullet" + (" -compact" if len(lists) > 1 else ""))
            out += [".It", line(stripped[2:])]
            gap, fresh = False, False
            continue
        # Anything else belongs to the innermost list whose items it is indented under.
        close(indent - 1)
        if gap and not fresh:
            out.append(".Pp")
        gap, fresh = False, False
        if stripped.startswith("```"):
            out.append(".Bd -literal -offset indent")
            while index < len(source) and not source[index].strip().startswith("```"):
                code = escape(source[index][indent:])
                out.append("\\&" + code if code.startswith((".", "'")) else code)
                index += 1
            index += 1
            out.append(".Ed")
        elif stripped.startswith("|"):
            rows = [stripped]
            while index < len(source) and source[index].strip().startswith("|"):
                rows.append(source[index].strip())
                index += 1
            out += table(rows)
        else:
            out.append(line(stripped))
    close(0)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1] if len(sys.argv) > 1 else "docs/REFERENCE.md", encoding="utf-8") as file:
        sys.stdout.write(convert(file.read()))
