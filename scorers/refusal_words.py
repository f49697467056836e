"""The English words a refusal is built of (scorers/refusal.py reads its shapes from them): a negation, a verb of
knowing or answering, a noun of information, the sources an answer was written from and a verb of their saying, and
the hedges that may open a refusal."""

from __future__ import annotations

NOT = r"(?:n['’]t|not|never)"
BE = r"(?:is|are|was|were|['’]s|['’]re)"
BE_NOT = rf"(?:{BE}\s*{NOT}|(?:ca|can|could|wo|will|would)\s*{NOT}\s+be|cannot\s+be)"
KNOW = (r"(?:see\b(?!\s+why)|find|tell|say|answer|confirm|determine|verify|help|locate|access|speak|comment|estimate|judge|"
        r"guess|track|check|look|give|provide|offer|recall|communicate|share|disclose)")
INFO = (r"(?:information|info|details|data|specifics|answers?|records?|knowledge|documentation|access|visibility|insight|"
        r"mention|entry|guidance|pricing|prices|figures|rates|timings|intel|news|updates|opening\s+(?:hours|times)|hours)")
# What the answer was written from; a few modifiers before it ("the provided help articles").
MODIFIERS = (r"(?:the|my|our|these|those|this|your|its|their|available|provided|given|retrieved|relevant|help|policy|"
             r"search|reference|support|related|current)")
SOURCE_NOUN = (r"(?:context|documents?|documentation|docs?|knowledge\s*base|database|passages?|texts?|sources?|materials?|"
               r"articles?|excerpts?|snippets?|faqs?|help\s*(?:center|centre)|search\s+results|references?|"
               r"reference\s+material|guides?|guidance|(?:retrieved|provided)\s+content|"
               r"(?:help|support|policy|faq|retrieved)\s+(?:pages?|entries)|(?:my|the)\s+information|"
               r"information\s+(?:given|provided|available|i\s+have|i['’]ve\s+been\s+(?:given|provided)|at\s+hand)|"
               r"(?:provided|available|given)\s+information|notes|info|(?:info|stuff|material|notes)\s+i(?:['’]ve|\s+have)(?:\s+got)?)")
SOURCE = rf"(?:{MODIFIERS}\s+){{0,3}}{SOURCE_NOUN}"
SAY = (r"(?:mention|cover|contain|include|specify|say|state|address|discuss|provide|give|list|detail|describe|"
       r"explain|indicate|tell|touch|go\s+into|answer|show|have|speak|clarify|talk|reference|offer|extend|deal\s+with|"
       r"elaborate|get\s+into|spell\s+out|outline)")
# An apology or a hedge: no claim alone, and what may open a refusal ("Honestly, I don't know").
HEDGE = (r"(?:(?:i['’]m|i\s+am|we['’]re|we\s+are)\s+(?:so\s+|very\s+|really\s+|truly\s+)?sorry|sorry|apologies|"
         r"my\s+apologies|unfortunately|regrettably|sadly|honestly|frankly|hmm+|well|oh|ah|aiy[ao]h?|alas|i['’]m\s+afraid|"
         r"i\s+am\s+afraid|afraid|i\s+fear|to\s+be\s+(?:honest|clear)|truthfully|but|and|so|however|also|ok(?:ay)?|"
         r"(?:that['’]s\s+)?(?:an?\s+)?(?:(?:good|great|fair|tricky|difficult|interesting)\s+)?question|"
         r"i(?:['’]d|\s+would)\s+(?:love|like)\s+to\s+help(?:\s+you)?)")
LEAD = rf"^(?:{HEDGE}[\s,;:!.—–-]*)*"
# The figures the speaker would quote, information too when the speaker says it lacks them ("I don't have delivery
# timeframes for Canada", "I have no lead times for that part"); only there: "there are no fees" is the shop's, a claim.
FIGURES = (r"(?:time\s*frames?|timelines?|timescales?|turnaround(?:\s+times?)?|(?:lead|delivery|shipping|transit|"
           r"processing|repair|refund|wait(?:ing)?)\s+times?|estimates?|etas?|costs?|fees|charges|amounts|numbers|quotes?|"
           r"dates|deadlines)\b")
HELD = rf"(?:{INFO}|{FIGURES})"  # what the speaker may say it lacks
# Holding back for the asker's sake ("I'm not comfortable interpreting it", "it wouldn't be right for me to comment"), a
# refusal of the speaker's
RESERVED = (r"\bi\s*(?:['’]m|am)\s+not\s+(?:really\s+|entirely\s+)?comfortable\s+[a-z]+ing\b|"
            r"\bi(?:['’]m\s+going\s+to|\s+am\s+going\s+to|['’]ll|\s+will|['’]d\s+better|\s+have\s+to|['’]ll\s+have\s+to)\s+"
            r"(?:hold\s+off|sit\s+(?:this|that)\s+one\s+out|steer\s+clear)\s+(?:on|of)\s+(?:this|that|it|answering)\b|\b(?:it|that)\s*(?:would|wo)\s*"
            r"(?:n['’]t|not)\s+be\s+(?:right|fair|appropriate|wise|responsible)\s+(?:of|for)\s+me\s+to\s+(?:comment|say|guess|"
            r"speculate|answer|quote|promise|confirm|estimate)\b")
# The refusal's object put before it with a relative clause: "Return windows depend on a few things I'd rather not guess
# at" (what comes before the speaker is no claim of its own)
RELATIVE_HEAD = (r"\b(?:depends?|hinges?|relies|rely|turns?)\s+on\s+(?:a\s+few|several|some|many|various|a\s+number\s+of|"
                 r"other)?\s*(?:things|factors|details|specifics|variables|points)\s+(?:that\s+|which\s+)?$")
# What the speaker needs first, so does not answer yet: "I'll need your order number first", "I'd need your order
# number", "I need a couple of things first" (no cue word: the gate reads refusal_gate.needs_first)
NEEDS_FIRST = (r"\bi(?:['’]ll|['’]d|\s+will|\s+would)?\s+(?:first\s+)?need\s+(?:your|a\s+(?:couple|few)\s+(?:of\s+)?"
               r"(?:things|details))\b")
# A system's notice, no answer: "Something went wrong on my end", "Try again in a bit", "Give it another go in a
# minute", "my delivery-rate cheat sheet seems to have wandered off" (the gate reads refusal_gate.needs_first)
NOTICE = (r"^\W*(?:(?:oops|whoops|uh[\s-]oh|sorry)\W+)?something\s+went\s+wrong\b|"
          r"^\W*(?:please\s+)?(?:try\s+again|give\s+it\s+another\s+(?:go|try|shot))\s+"
          r"(?:in\s+a\s+(?:bit|minute|moment|sec(?:ond)?|few\s+minutes)|later|shortly)\b|"
          r"\bmy\s+(?:[\w-]+\s+){0,4}?(?:seems?\s+to\s+have\s+|has\s+|have\s+)(?:wandered\s+off|"
          r"gone\s+missing|vanished|disappeared)\b")
