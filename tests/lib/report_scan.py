#!/usr/bin/env python3
"""report_scan.py FILE... — check pages `aka report` wrote (not a test itself; exit 1 and
one line per problem when a page breaks a rule):

- no external reference: every src/href/xlink:href/action/formaction/poster/data
  attribute is an in-page anchor ("#...") or, in an index, a relative link to a
  sibling "NAME.html" (no scheme, no slash); no <link>, <iframe>, <object>, <embed>,
  <base>, <meta http-equiv>; no url( or @import in a style; no "://" in any attribute;
- exactly one <script> element, the page's own (sort + render time), whose text holds
  no URL and no "fetch"/"XMLHttpRequest"/"import(";
- no event-handler attribute (on...=) anywhere: record text reaching the page as markup
  would show up here.
Prints "FILE points=N" (elements whose class starts with "pt ", the latency chart's
markers) for every page that passes.
"""
import html.parser
import re
import sys

URL_ATTRS = {"src", "href", "xlink:href", "action", "formaction", "poster", "data", "srcset"}
BANNED = {"link", "iframe", "object", "embed", "base", "frame", "img", "audio", "video"}


class Scan(html.parser.HTMLParser):
    def __init__(self, name):
        super().__init__(convert_charrefs=True)
        self.name, self.problems, self.scripts, self.points = name, [], [], 0
        self.in_script = self.in_style = False

    def bad(self, msg):
        self.problems.append("%s: %s" % (self.name, msg))

    def handle_starttag(self, tag, attrs):
        if tag in BANNED:
            self.bad("<%s> element" % tag)
        if tag == "meta" and any(k == "http-equiv" for k, _ in attrs):
            self.bad("<meta http-equiv>")
        for k, v in attrs:
            v = v or ""
            if k.startswith("on"):
                self.bad("event handler attribute %s=%r on <%s>" % (k, v, tag))
            if k in URL_ATTRS and not (v.startswith("#") or re.fullmatch(r"[A-Za-z0-9._%-]+\.html", v)):
                self.bad("%s=%r on <%s> is not an in-page or sibling link" % (k, v, tag))
            if "://" in v or v.strip().lower().startswith(("javascript:", "//", "data:")):
                self.bad("URL in attribute %s=%r on <%s>" % (k, v, tag))
            if k == "class" and v.startswith("pt "):
                self.points += 1
        if tag == "script":
            self.in_script = True
            self.scripts.append("")
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        self.in_script = self.in_script and tag != "script"
        self.in_style = self.in_style and tag != "style"

    def handle_data(self, data):
        if self.in_script:
            self.scripts[-1] += data
        if self.in_style and ("url(" in data or "@import" in data):
            self.bad("url( or @import in a stylesheet")


problems = []
for name in sys.argv[1:]:
    s = Scan(name)
    s.feed(open(name, encoding="utf-8").read())
    s.close()
    if len(s.scripts) != 1:
        s.bad("%d <script> elements, expected the page's one" % len(s.scripts))
    for text in s.scripts:
        if re.search(r"://|fetch|XMLHttpRequest|import\(|src=|href=", text):
            s.bad("the script names a URL or a loader")
    problems += s.problems
    if not s.problems:
        print("%s points=%d" % (name, s.points))
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
