"""An answer written for a speech engine (SSML), read as what is spoken.

A voice channel's model wraps its answer in SSML: `<speak>…</speak>` (sometimes unclosed), `<break time="300ms"/>`,
`<say-as interpret-as="cardinal">12.99</say-as>`, `<sub alias="United Kingdom">UK</sub>`, `<p>`, `<s>`, `<prosody>`,
`<emphasis>`, `<audio src="…"/>`. Its tags are no words of a clause: read as words, "<speak>您好" was a claim and
"valid for <say-as interpret-as="cardinal">3</say-as> years" an unsupported one. Each tag goes; what it wraps stays:
- `<sub alias="X">Y</sub>` keeps Y, what was written: the alias is how to pronounce it, the written form is what the
  model took from the knowledge base (a chunk says "UK", not how a speech engine should say it);
- `<say-as …>12.99</say-as>` keeps 12.99, `<phoneme …>`, `<emphasis>`, `<prosody>` their words;
- `<audio …/>` and `<mark …/>` say nothing;
- `<break/>` is a pause, a space (a clause apart in Chinese, as a comma; it ends no sentence);
- `<p>` and `<s>` are SSML's paragraph and sentence: their boundaries are line breaks, which end a sentence.

Only SSML's own element names are read, and only in an answer holding one that HTML does not have (`<speak`,
`<break`, `<say-as`, …): `<p>`, `<s>`, `<sub>` and `<audio>` are HTML's as well, and `</s>` a chat template's token
(scorers/small_models.py), so an HTML answer or a "<" in ordinary text stays as written. An answer without a "<" pays
one substring test; one with a "<" a search for those names (one regular expression: a dozen substring tests cost more
over an HTML answer, each a scan of the whole text).
"""

from __future__ import annotations

import re

_VENDOR = r"(?:amazon|mstts|google):[a-z][\w-]*"  # amazon:effect, amazon:domain, mstts:express-as
# A tag of a name only SSML has (and its vendors' prefixed ones), whole (not "<language>" nor "<marker>"): the gate
_SSML_ONLY_TAG = re.compile(rf"</?(?:speak|break|say-as|prosody|emphasis|phoneme|voice|lang|mark|{_VENDOR})(?=[\s/>])")
# Every SSML tag, opening, closing or empty, with its attributes; its name is group 1
_TAG = re.compile(rf"</?(speak|break|say-as|sub|prosody|emphasis|phoneme|audio|voice|lang|mark|p|s|w|{_VENDOR})"
                  r"(?:\s[^<>]*)?/?>")
_SENTENCE_TAGS = frozenset(("p", "s"))


def spoken(answer: str) -> str:
    """The answer as the speech engine says it: its SSML tags gone, what they wrap kept (the module's docstring);
    the answer itself when it holds no SSML. Not one character for one: the judge's claims are texts, no offsets."""
    if "<" not in answer or _SSML_ONLY_TAG.search(answer) is None:
        return answer
    return _TAG.sub(_said, answer)


def _said(tag: re.Match[str]) -> str:
    name = tag.group(1)
    if name in _SENTENCE_TAGS:
        return "\n"
    return " " if name == "break" else ""
