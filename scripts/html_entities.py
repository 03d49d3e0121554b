#!/usr/bin/env python3
"""Prints the named character references Monsoon decodes, as `Sources/MonsoonPodcasts/Feed/HTMLEntities.swift`
packs them: `name hex` pairs, sorted by name. From Python's copy of the standards' lists:
HTML 5's names that stand for one character (2,032, which hold all of HTML 4's 252; `lang` and `rang`
are HTML 5's U+27E8 and U+27E9, as browsers read them, not HTML 4's U+2329 and U+232A).
HTMLEntityTableTests checks the Swift table against this, so the two cannot drift."""
import html.entities

def table():
    names = {name[:-1]: ord(value) for name, value in html.entities.html5.items() if name.endswith(';') and len(value) == 1}
    for name, code in html.entities.name2codepoint.items():
        names.setdefault(name, code)
    return dict(sorted(names.items()))

if __name__ == '__main__':
    pairs = ['%s %x' % (name, code) for name, code in table().items()]
    line, lines = '', []
    for pair in pairs:
        if len(line) + len(pair) + 1 > 112:
            lines.append(line)
            line = ''
        line = (line + ' ' + pair).strip()
    lines.append(line)
    print('\n'.join('        ' + l for l in lines))
