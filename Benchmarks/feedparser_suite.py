#!/usr/bin/env python3
"""Monsoon's feed parser against feedparser's own test suite (`make bench-feedparser`).

feedparser's tests are feed documents whose header comment holds a Python expression (`Expect:`) over the
parsed result. This script keeps the pinned sdist in ~/.cache/monsoon ($XDG_CACHE_HOME/monsoon), checks its
sha256 and extracts `tests/` into a fresh temporary folder each run, parses every test
document with Monsoon (`monsoon-feed-bench --fields`, one process for all), builds a feedparser-shaped dict
from Monsoon's fields and evaluates each expectation against it.

Scope, decided from the expectation text alone, before any result is seen:
- in scope: expectations that read only fields Monsoon keeps: feed title, link, language, author, image href;
  entries' title, link, id/guid, first enclosure's href/type/length, published/updated date (Monsoon keeps one
  date), itunes_duration (compared in seconds), itunes_explicit, image href; len(entries).
- a title is compared with the text feedparser's value means read as HTML (`<b>&#38;</b>` means `&`; an `<img>`
  alone means nothing, as Monsoon's missing title does): Monsoon keeps titles as text. A document that declares a
  title plain text (`type="text"`) has its titles compared as strings. The figure comparing every title as a string
  is printed too.
- `bozo` terms are dropped from expectations (Monsoon has no such flag: it repairs what it can and refuses the
  rest, and a refused document fails its test); an expectation of `bozo` alone is out of scope.
- out of scope: any other field (descriptions, content, tags, authors' details, `encoding`, `version` ...), a
  second enclosure (Monsoon keeps one media file per episode), tests that need HTTP headers (`tests/http`, `http_*`), and tests whose `SkipUnless`
  fails here, as feedparser's runner skips them.

Usage: feedparser_suite.py [--bench PATH] [--cache DIR] [--verbose]
"""
import argparse
import atexit
import calendar
import codecs
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from html.parser import HTMLParser
from types import SimpleNamespace

VERSION = "6.0.11"
SHA256 = "c9d0407b64c6f2a065d0ebb292c2b35c01050cc0dc33757461aaabdc4c4184d5"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FEED_KEPT = {("title",), ("title_detail", "value"), ("link",), ("language",), ("author",), ("image", "href")}
ENTRY_KEPT = {("title",), ("title_detail", "value"), ("link",), ("id",), ("guid",), ("enclosures",), ("enclosures", "0"),
              ("enclosures", "0", "href"), ("enclosures", "0", "url"), ("enclosures", "0", "type"), ("enclosures", "0", "length"),
              ("published_parsed",), ("updated_parsed",), ("itunes_duration",), ("itunes_explicit",), ("image", "href")}
NAMES_KEPT = {"feed", "entries", "len", "not", "and", "or", "is", "in", "None", "True", "False", "bozo", "u"}


def sdist(cache):
    """The tests, extracted afresh into a folder of this run's own from the cached sdist, whose sha256 is checked each run."""
    path = os.path.join(cache, f"feedparser-{VERSION}.tar.gz")
    if not os.path.exists(path):
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", f"feedparser=={VERSION}",
                        "-d", cache], check=True, stdout=subprocess.DEVNULL)
    with open(path, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"error: {path} has sha256 {digest}, not the pinned {SHA256}; delete it and run again")
    target = tempfile.mkdtemp(prefix="monsoon-feedparser-")
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    # Extracted from the bytes just checked, not from the file again.
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(f"feedparser-{VERSION}/tests/")]
        archive.extractall(target, members=members, filter="data")
    return os.path.join(target, f"feedparser-{VERSION}", "tests")


def importable(name, *_):
    """`__import__` for SkipUnless: of `codecs` and `sys` only what the tests ask (`codecs.lookup`, `sys.version`);
    any other module is only found, never run."""
    if name in STAND_INS:
        return STAND_INS[name]
    if importlib.util.find_spec(name) is None:
        raise ImportError(name)
    return True


STAND_INS = {"codecs": SimpleNamespace(lookup=codecs.lookup), "sys": SimpleNamespace(version=sys.version)}


def header_text(data):
    """The header comment as text: runtests.py reads it after converting UTF-16/32 documents."""
    for bom, codec in ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\xfe\xff", "utf-16-be"),
                       (b"\xff\xfe", "utf-16-le"), (b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"),
                       (b"\x00<", "utf-16-be"), (b"<\x00", "utf-16-le")):
        if data.startswith(bom):
            return data.decode(codec, "replace")
    return data.decode("latin-1")


def expectation(text):
    skip = re.search(r"SkipUnless:\s*(.*?)\n", text)
    found = re.search(r"Description:\s*(.*?)\s*Expect:\s*(.*?)\s*-->", text, re.S)
    return (skip.group(1).strip() if skip else "1"), (found.group(2).strip() if found else None)


def normalized(expr):
    """Attribute access and `get`/`has_key`/`in` written as subscripts, for the scope check."""
    expr = re.sub(r"\.(?:get|has_key)\((['\"][^'\"]*['\"])[^)]*\)", r"[\1]", expr)
    expr = re.sub(r"(['\"]\w+['\"])\s+(?:not\s+)?in\s+(feed|entries\[\d+\])", r"\2[\1]", expr)
    return re.sub(r"\b(feed|entries\[\d+\])\.(\w+)", r"\1['\2']", expr)


def scope(expr, path):
    """None when in scope, else the reason (one short phrase, the field that puts it out)."""
    if "http" in os.path.basename(path) or f"{os.sep}http{os.sep}" in path:
        return "needs HTTP headers"
    expr = normalized(expr)
    without_strings = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", expr)
    for name in re.findall(r"\b[A-Za-z_]\w*\b", without_strings):
        if name not in NAMES_KEPT:
            return f"{name} (not kept)"
    uses = False
    for root, chain in re.findall(r"\b(feed|entries\[\d+\])((?:\[[^\]]+\])*)", expr):
        keys = tuple(k.strip("'\" ") for k in re.findall(r"\[([^\]]+)\]", chain))
        if root == "feed":
            if keys and keys not in FEED_KEPT:
                return f"feed {keys[0]} (not kept)"
        elif keys[:1] == ("enclosures",) and len(keys) > 1 and keys[1] != "0":
            return "a second enclosure (one media file per episode)"
        elif keys and keys not in ENTRY_KEPT:
            return f"entry {keys[0]} (not kept)"
        uses = uses or bool(keys) or root.startswith("entries")
    if re.search(r"\blen\(\s*entries\s*\)", expr):
        uses = True
    if not uses:
        return "no field Monsoon keeps (bozo or nothing)"
    return None


class Dict(dict):
    """feedparser's dict: attribute access, and `has_key`."""
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)

    def has_key(self, key):
        return key in self


class Seconds(str):
    """`itunes_duration`: feedparser keeps the text, Monsoon the seconds; equal when the text means as many."""
    def __new__(cls, seconds):
        value = str.__new__(cls, str(seconds))
        value.seconds = seconds
        return value

    def __eq__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        total = 0
        try:
            for part in other.strip().split(":"):
                total = total * 60 + int(float(part))
        except ValueError:
            return False
        return total == self.seconds

    __hash__ = str.__hash__


class Text(str):
    """A title: feedparser keeps an HTML title as HTML (`<b>&amp;</b>`), Monsoon as the text it means (`&`); equal when
    the expected value means this text read as HTML."""
    def __eq__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return str.__eq__(self, meaning(other))

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__


class TextOfHTML(HTMLParser):
    """The text of an HTML fragment as a browser shows it: tags and comments dropped, a script's or style's text with
    them, references decoded."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.hidden = [], 0

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("script", "style")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.hidden:
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def meaning(html):
    """`html`'s text with HTML's whitespace (not a no-break space) collapsed and trimmed, as Monsoon keeps titles."""
    reader = TextOfHTML()
    reader.feed(html)
    reader.close()
    return re.sub(r"[ \t\n\r\f]+", " ", "".join(reader.parts)).strip(" \t\n\r\f")


def declares_plain_title(data):
    """A title declared plain text (Atom's `type="text"`, `text/plain`): feedparser's value is that text, not HTML."""
    return re.search(rb"""<title\b[^>]*\btype\s*=\s*["'](?:text|text/plain)["']""", data) is not None


def shaped(fields, exact=False):
    """A feedparser-shaped result from one `--fields` line; `exact`: titles compared as strings."""
    title = str if exact else Text
    def put(target, key, value):
        if value is not None:
            target[key] = value

    feed = Dict()
    # Monsoon leaves a title that means nothing (`<img …>`) empty; feedparser's is the empty string or markup.
    feed["title"] = title(fields.get("title") or "")
    feed["title_detail"] = Dict(value=feed["title"])
    put(feed, "link", fields.get("link"))
    put(feed, "language", fields.get("language"))
    put(feed, "author", fields.get("author"))
    if fields.get("image"):
        feed["image"] = Dict(href=fields["image"])
    entries = []
    for item in fields.get("episodes", []):
        entry = Dict()
        entry["title"] = title(item.get("title") or "")
        entry["title_detail"] = Dict(value=entry["title"])
        put(entry, "link", item.get("link"))
        put(entry, "id", item.get("guid"))
        put(entry, "guid", item.get("guid"))
        entry["enclosures"] = []
        if item.get("url"):
            enclosure = Dict(href=item["url"], url=item["url"])
            put(enclosure, "type", item.get("type"))
            put(enclosure, "length", None if item.get("length") is None else str(item["length"]))
            entry["enclosures"].append(enclosure)
        if item.get("published"):
            parsed = time.gmtime(calendar.timegm(time.strptime(item["published"], "%Y-%m-%dT%H:%M:%SZ")))
            entry["published_parsed"] = entry["updated_parsed"] = parsed
        if item.get("duration") is not None:
            entry["itunes_duration"] = Seconds(item["duration"])
        if "explicit" in item:
            entry["itunes_explicit"] = item["explicit"]
        if item.get("image"):
            entry["image"] = Dict(href=item["image"])
        entries.append(entry)
    return {"feed": feed, "entries": entries}


def without_bozo(expr):
    expr = re.sub(r"\b(?:not\s+)?bozo\s+and\s+", "", expr)
    return re.sub(r"\s+and\s+(?:not\s+)?bozo\b", "", expr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", default=None, help="monsoon-feed-bench (default: .build/release, else .build/debug)")
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "monsoon")
    parser.add_argument("--cache", default=os.environ.get("FEEDPARSER_CACHE", cache), help="where the sdist is kept (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="print every failure's expectation and fields")
    args = parser.parse_args()
    bench = args.bench or next((p for p in (os.path.join(ROOT, ".build", c, "monsoon-feed-bench") for c in ("release", "debug"))
                                if os.path.exists(p)), None)
    if not bench:
        sys.exit("error: no monsoon-feed-bench; build it with `swift build -c release --product monsoon-feed-bench`")
    tests = sdist(args.cache)

    cases, out = [], Counter()
    for folder in ("wellformed", "illformed", "encoding", "entities"):
        for directory, _, names in sorted(os.walk(os.path.join(tests, folder))):
            for name in sorted(names):
                if not name.endswith(".xml"):
                    continue
                path = os.path.join(directory, name)
                with open(path, "rb") as f:
                    data = f.read()
                skip, expr = expectation(header_text(data))
                try:
                    # feedparser's runner has its module at hand: `feedparser.X` is true there.
                    skipped = not eval(skip, {"__builtins__": {"__import__": importable}, "feedparser": Dict(ACCEPTABLE_URI_SCHEMES=True)})
                except (ImportError, LookupError, NotImplementedError, AttributeError, NameError):
                    skipped = True
                reason = "skipped by its SkipUnless" if skipped else "no expectation" if expr is None else scope(expr, path)
                if reason:
                    out[reason] += 1
                else:
                    cases.append((path, expr, declares_plain_title(data)))

    started = time.monotonic()
    lines = subprocess.run([bench, "--fields"] + [path for path, _, _ in cases], check=True, capture_output=True, text=True).stdout
    elapsed = time.monotonic() - started
    results = {line["path"]: line for line in map(json.loads, lines.splitlines())}

    def outcome(expr, fields, exact=False):
        try:
            return bool(eval(without_bozo(expr), {"__builtins__": {"len": len}}, shaped(fields, exact))), "expectation false"
        except Exception as error:  # the expectation reads a field Monsoon left empty
            return False, f"{type(error).__name__}: {error}"

    failures, exact_passes = [], 0
    for path, expr, plain in cases:
        fields = results.get(path, {"error": "no output"})
        relative = os.path.relpath(path, tests)
        if fields.get("error"):
            failures.append((relative, f"refused: {fields['error']}", expr))
            continue
        passed, reason = outcome(expr, fields, exact=plain)
        exact_passes += outcome(expr, fields, exact=True)[0]
        if not passed:
            failures.append((relative, reason, expr))

    total = len(cases)
    passed = total - len(failures)
    for relative, reason, expr in failures:
        print(f"FAIL {relative}: {reason}" + (f"\n     expect: {expr}" if args.verbose else ""))
    print(f"\nOut of scope: {sum(out.values())} tests")
    rare = [(reason, count) for reason, count in out.items() if count < 5]
    for reason, count in out.most_common():
        if count >= 5 or args.verbose:
            print(f"  {count:5d}  {reason}")
    if rare and not args.verbose:
        print(f"  {sum(count for _, count in rare):5d}  {len(rare)} other fields not kept, fewer than 5 tests each (--verbose lists them)")
    print(f"\nfeedparser {VERSION} suite, fields Monsoon keeps: {passed}/{total} passed ({100 * passed / total:.1f} %; "
          f"{100 * exact_passes / total:.1f} % comparing titles as strings), parsed in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
