"""Runbooks: relations stated in Markdown, reStructuredText or plain-text documents.

Extraction is a fixed set of sentence patterns ("X depends on Y and Z", "X is backed by Y", ...), not a
model: the same text always gives the same edges, and a sentence that matches no pattern, is negated or
asks a question gives nothing rather than a guess. Names are kept as written; canonicalisation is the
build's job. Turning a document's markup into cited sentences is `sync.sources.runbook_text`'s job, cutting it
into passages to quote beside answers `sync.sources.runbook_passages`'s.

An untrusted document gives no passages at all: its edges wait for an admin's review, but nothing
reviews quoted text, and a passage is shown to people (and may be put in a model's prompt) as is.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from graph.facts import Assertion, Citation, Problem, SourceFacts
from graph.relations import DEPENDS_ON, OWNED_BY
from sync.sources.reading.folder_walk import walk_folder
from sync.sources.runbook_passages import split_passages
from sync.sources.runbook_text import Paragraph, split_paragraphs, split_sentences

SUFFIXES = (".md", ".markdown", ".txt", ".rst")
MAX_NAME_WORDS = 6


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


Triple = tuple[str, str, str]

# --- sentences ---------------------------------------------------------------------------------------
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)|,?\s*\b(?:e\.g\.|i\.e\.|such as|including)[^,]*(?:,|$)", re.I)
_CLAUSE_BREAK = re.compile(r";\s+|\s+but\s+|,\s+(?:while|whereas)\s+", re.I)
_QUESTION_WORDS = _wordset(
    "does do did is are was were can could should would will what which who whom whose why how where"
)

# --- the patterns ------------------------------------------------------------------------------------
_ADVERBS = (
    "also|currently|directly|indirectly|heavily|still|now|only|mainly|mostly|primarily|largely|partly|"
    "partially|always|usually|typically|actually|critically|strongly|transitively|synchronously|"
    "asynchronously|additionally|often|frequently|ultimately|today"
)
_ADV = rf"(?:(?:{_ADVERBS})\s+)*"
_BE = rf"(?:is|are)\s+{_ADV}"
_GAP = r"(?:[\w./-]+\s+){0,4}?"  # "publishes payment events to": a few words before the preposition
_HAS_DEPENDENCY = rf"(?:has|have)\s+{_ADV}an?\s+(?:[\w-]+\s+)?dependency\s+on"  # "has a hard dependency on"
# group name -> (verb phrase, relation, whether the sentence names the relation's dst first)
_VERBS: dict[str, tuple[str, str, bool]] = {
    "depends": (rf"(?:depends?|relies|rely)\s+(?:up)?on|{_HAS_DEPENDENCY}", DEPENDS_ON, False),
    "dependency_of": (rf"{_BE}(?:(?:a|an|one)\s+)?(?:[\w-]+\s+)?dependenc(?:y|ies)\s+of", DEPENDS_ON, True),
    "backed": (rf"{_BE}backed\s+by", "backed_by", False),
    "runs": (r"runs?\s+on", "runs_on", False),
    "owned": (rf"{_BE}owned\s+by", OWNED_BY, False),
    "owns": (r"owns?", OWNED_BY, True),
    "calls": (r"calls?", "calls", False),
    "called": (rf"{_BE}called\s+by", "calls", True),
    "uses": (r"(?:uses?|utili[sz]es?)", "uses", False),
    "used": (rf"{_BE}(?:used|utili[sz]ed)\s+by", "uses", True),
    "publishes": (rf"publish(?:es)?\s+{_GAP}to", "publishes_to", False),
    "reads": (rf"reads?\s+{_GAP}from", "reads_from", False),
    "writes": (rf"writes?\s+{_GAP}to", "writes_to", False),
}
_VERB_GROUPS = "|".join(f"(?P<{key}>{verb})" for key, (verb, _, _) in _VERBS.items())
# The earliest verb wins (lazy subject); a colon may follow it when a list item finishes the sentence.
_PATTERN = re.compile(rf"^(?P<src>.+?)\s+{_ADV}(?:{_VERB_GROUPS}):?\s+(?P<dst>.+)$", re.I)
_NEGATION = re.compile(
    r"\b(?:not|never|no|nor|neither|none|nothing|nobody|cannot|formerly|previously|used\s+to)\b|n[’']t\b", re.I
)

# --- names -------------------------------------------------------------------------------------------
_NOTE_PREFIX = re.compile(
    r"^(?:please\s+)?(?:note|remember|recall|be aware|keep in mind|bear in mind)\b(?:\s+that)?", re.I
)
_LEADING_PHRASE = _wordset(
    "in on at during since after before for currently today now also however additionally moreover "
    "furthermore as so then thus therefore typically usually normally generally otherwise finally"
)
_QUALIFIER = re.compile(
    r"(?:\s+[-–—]+\s+|(?:^|\s+|,\s*)(?:for|during|when|whenever|while|to|via|through|over|because|since|so|"
    r"which|who|whose|that|where|if|unless|until|before|after|as|with|without|from|in|on|at|by|using|"
    r"every|except|instead|whereas|although|though|once|like)\b).*$",
    re.I | re.S,
)
_UNCERTAIN = re.compile(r"\b(?:or|either|nor)\b|and/or", re.I)
_LIST = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s+&\s+", re.I)
_LEAD_TRIM = re.compile(r"^[\s\"'“”‘’:,;*_–—-]+")
_TAIL_TRIM = re.compile(r"[\s\"'“”‘’:,;.!?*_–—-]+$")
_LEADING_WORDS = re.compile(r"^(?:(?:the|a|an|our|both|also|currently|now|still)(?:\s+|$))+", re.I)
_WORD = re.compile(r"[a-z’']+")
_VERB_IN_NAME = re.compile(
    r"\b(?:depends|relies|owns|owned|backed|calls|uses|utili[sz]es|runs|reads|writes|publishes)\b", re.I
)
# A name holding one of these is a misread clause, not a name: reject the whole side.
_CLAUSE_WORDS = _wordset(
    "if unless whether when whenever where that which who whom should must can could may might will would "
    "shall does do did to has have had is are was were be been its their his her my your"
)
# A name starting with one of these points at something else; it names nothing by itself.
_VAGUE = _wordset(
    "this these those it they them we us you he she i one all most some many several each every any other "
    "others such another various multiple not no of etc something everything anything nothing everyone "
    "someone first then please always never here there what following in on at during since after before "
    "for from to with by via out port demand startup schedule weekdays weekends mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays"
)


def read_runbooks(source: str, location: str, *, trusted: bool = True) -> SourceFacts:
    """Relations from one runbook file, or from every runbook under a folder (recursive, sorted by path).

    Raises FileNotFoundError when `location` does not exist; a file that cannot be read or is not UTF-8
    text becomes a Problem naming it, and the other files are still read.
    """
    found, refused = walk_runbooks(location)
    if not found:
        problem = Problem(location, f"no runbooks ({', '.join('*' + s for s in SUFFIXES)}) in this folder")
        return SourceFacts(source, problems=(*refused, problem))
    parts = [_read_one(source, name, path, held=not trusted) for name, path in found]
    return SourceFacts(
        source,
        assertions=tuple(a for part in parts for a in part.assertions),
        problems=refused + tuple(p for part in parts for p in part.problems),
        passages=tuple(p for part in parts for p in part.passages),
    )


def read_untrusted_runbooks(source: str, location: str) -> SourceFacts:
    """`read_runbooks` for outside documents: every edge held for review, no passages."""
    return read_runbooks(source, location, trusted=False)


def find_runbooks(location: str) -> list[tuple[str, Path]]:
    """(citation name, path) of each runbook at `location`: a file as given, or a folder's files by name."""
    return walk_runbooks(location)[0]


def walk_runbooks(location: str) -> tuple[list[tuple[str, Path]], tuple[Problem, ...]]:
    """The runbooks at `location` (sorted by name), and the symlinks refused on the way.

    A folder is walked as a catalog folder is (`folder_walk`): symlinks followed only inside it and
    never twice; a loop, a link out of the folder or a dangling link is a problem naming it.
    """
    path = Path(location)
    if path.is_file():
        return [(location, path)], ()
    if not path.is_dir():
        raise FileNotFoundError(f"runbook location {location} does not exist")
    folder = Path(os.path.abspath(location))
    prefix = folder.name

    def named(relative: str) -> str:
        return f"{prefix}/{relative}"

    walked = walk_folder(folder, _is_runbook_file, _is_hidden, named)
    return sorted((named(relative), full) for relative, full in walked.files), walked.problems


def _is_runbook_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES) and not name.startswith(".")


def _is_hidden(name: str) -> bool:
    return name.startswith(".")  # .git and friends hold no runbooks


def parse_runbook(source: str, name: str, data: bytes, *, held: bool = False) -> SourceFacts:
    """Relations (and, when trusted, passages) from one runbook's bytes; binary or non-UTF-8 content is one
    error Problem, never a raise."""
    if b"\x00" in data:
        return SourceFacts(source, problems=(Problem(name, "binary file, not text; skipped", "encoding", "error"),))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        message = f"not UTF-8 text ({exc.reason} at byte {exc.start}, line {line}); skipped"
        return SourceFacts(source, problems=(Problem(name, message, "encoding", "error"),))
    facts = extract_relations(source, name, text, held=held)
    return facts if held else replace(facts, passages=split_passages(source, name, text))


def extract_relations(source: str, name: str, text: str, *, held: bool = False) -> SourceFacts:
    """One by-name, extracted Assertion per edge stated in `text`, cited as `name:line` with its sentence."""
    paragraphs, problems = split_paragraphs(name, text)
    assertions: dict[tuple[str, str, str, int], Assertion] = {}
    for line, sentence, triples in _stated(paragraphs):
        for src, rel, dst in triples:
            # An outside document must never decide who gets paged: ownership from untrusted text is
            # dropped outright rather than held, so no approval can turn it into an owned_by edge.
            if held and rel == OWNED_BY:
                continue
            citation = Citation(source, f"{name}:{line}", origin=name, text=sentence, extracted=True)
            assertions.setdefault((src, rel, dst, line), Assertion(src, rel, dst, citation, by_name=True, held=held))
    return SourceFacts(source, assertions=tuple(assertions.values()), problems=problems)


def _read_one(source: str, name: str, path: Path, *, held: bool) -> SourceFacts:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return SourceFacts(source, problems=(Problem(name, f"cannot read: {exc.strerror or exc}", "file", "error"),))
    return parse_runbook(source, name, data, held=held)


def _stated(paragraphs: tuple[Paragraph, ...]) -> list[tuple[int, str, list[Triple]]]:
    """(line, sentence, relations) per sentence; a list item may finish a lead-in like "X depends on:"."""
    out: list[tuple[int, str, list[Triple]]] = []
    lead = ""
    for paragraph in paragraphs:
        sentences = split_sentences(paragraph.lines)
        for index, (line, sentence) in enumerate(sentences):
            triples = _relations(sentence)
            if not triples and paragraph.item and index == 0 and lead:
                sentence = f"{lead} {sentence}"
                triples = _relations(sentence)
            out.append((line, sentence, triples))
        if not paragraph.item:
            last = sentences[-1][1] if sentences else ""
            lead = last if last.endswith(":") and not _relations(last) else ""
    return out


def _relations(sentence: str) -> list[Triple]:
    """The relations a sentence states, without repeats; none for a question."""
    text, before = sentence, ""
    for _ in range(4):  # nested parentheses, innermost first
        text, before = _PARENTHETICAL.sub("", text), text
        if text == before:
            break
    text = " ".join(text.split()).rstrip(" .!")
    words = text.split(None, 1)
    if not words or text.endswith("?") or words[0].lower() in _QUESTION_WORDS:
        return []
    found = [triple for clause in _CLAUSE_BREAK.split(text) for triple in _clause_relations(clause)]
    return list(dict.fromkeys(found))


def _clause_relations(clause: str) -> list[Triple]:
    match = _PATTERN.search(clause)
    if match is None or _NEGATION.search(clause, 0, match.start("dst")):
        return []
    key = next(k for k in _VERBS if match.group(k) is not None)
    _, rel, reverse = _VERBS[key]
    subjects = _names(_subject(match["src"]), strict=True)
    objects = _names(_object(match["dst"]))
    if reverse:
        subjects, objects = objects, subjects
    return [(s, rel, o) for s in subjects for o in objects if s.lower() != o.lower()]


def _object(text: str) -> str:
    text = _QUALIFIER.sub("", text.replace(" as well as ", " and "))
    head, colon, tail = text.partition(": ")
    # "X depends on the following: Y" names Y; "X depends on Y: details" names Y
    return _QUALIFIER.sub("", tail) if colon and not _names(head) else head


def _subject(text: str) -> str:
    text = _NOTE_PREFIX.sub("", text.rsplit(": ", 1)[-1])
    segments = text.split(",")
    while len(segments) > 1 and segments[0].split()[:1] and segments[0].split()[0].lower() in _LEADING_PHRASE:
        segments.pop(0)  # "In production, billing ..." / "Currently, billing ..."
    return ",".join(segments)


def _names(text: str, *, strict: bool = False) -> list[str]:
    """The names in a list ("Y, Z and W"); [] when the list is hedged ("Y or Z") or reads as a clause."""
    if _UNCERTAIN.search(text):
        return []
    names = []
    for part in _LIST.split(text):
        name = _name(part)
        if name is None or (strict and not name):
            return []
        if name:
            names.append(name)
    return names


def _name(raw: str) -> str | None:
    """The cleaned name; "" when it names nothing by itself, None when it is a misread clause."""
    if len(raw) > 200:
        return None
    text = _TAIL_TRIM.sub("", _LEAD_TRIM.sub("", raw))
    text = _TAIL_TRIM.sub("", _LEAD_TRIM.sub("", _LEADING_WORDS.sub("", text)))
    words = _WORD.findall(text.lower())
    if not text or not any(ch.isalnum() for ch in text):
        return ""
    if len(text.split()) > MAX_NAME_WORDS or _CLAUSE_WORDS.intersection(words) or _VERB_IN_NAME.search(text):
        return None
    if any(quote in text for quote in '"“”'):
        return None  # reported speech: 'The docs say "Billing ...' is not a name
    first = text.split()[0]
    if (words[:1] and words[0] in _VAGUE) or (first[0].isdigit() and not any(c.isalpha() for c in first)):
        return ""  # "it", "all services", "4 GB of memory": names nothing by itself
    return " ".join(text.split())
