"""What is said around a refusal, no claim in an answer that refuses (judging/local_judge.py, _judged): apologies,
greetings and thanks, pointers to a person or a team, the question said back, courtesy, a reason not to answer, a
search that found nothing or a tool that failed, a topic's line, the steps to reach support; and a short clause, or
one about the speaker, that shares nothing with the question or the context. Split from scorers/declines.py, which
reads the clauses in which the speaker declines.
"""

from __future__ import annotations

import re

from ragpulse.scorers.casual import AROUND as CASUAL_AROUND
from ragpulse.scorers.casual import ZH_AROUND as CASUAL_ZH_AROUND
from ragpulse.scorers.chrome import numbers_said, said_by_the_channel
from ragpulse.scorers.declines import SPEAKER
from ragpulse.scorers.refusal_zh import HAN, mandarin
from ragpulse.scorers.text import Clause, clause, size

_EN_AROUND = (
    # apologies and thanks
    r"^\W*(?:och\W+)?(?:(?:so|very|really|terribly)\s+)?(?:sorry(?:\s+(?:about|aboot)\s+(?:that|this))?|apologies|my\s+apologies|please\s+accept\s+our\s+apologies|"
    r"thanks?(?:\s+you)?(?:\s+for\s+\w+(?:\s+\w+){0,3})?|unfortunately|regrettably|regretfully|sadly|alas|sry|soz|"
    r"idk|dunno|hm+|um+|uh+|oops)(?:\W|[哈啊呀哦呢啦嘛亲诶嗯])*$",
    r"^\W*(?:good|great|excellent|interesting|fair)\s+question\b|^\W*(?:that['’]s|this\s+is|it['’]s)\s+(?:a\s+)?(?:tricky|tough|"
    r"hard|difficult|good)\s+one\b|^\W*to\s+answer\s+(?:whether|if|that|this|your)\b|"
    r"^\W*(?:[\w'’-]+\s+){1,8}?(?:is|['’]s)\s+a\s+(?:tricky|tough|hard|difficult)\s+one\W*$",  # "That mix of … is a tricky one"
    # the asker's plan remarked on, nothing of the shop: "Picking it up in person sounds convenient"
    r"^\W*(?:[\w'’-]+\s+){1,8}?sounds?\s+(?:(?:really|very|so|pretty|quite)\s+)?(?:convenient|great|good|nice|handy|lovely|easy|"
    r"sensible|reasonable|ideal|like\s+an?\s+(?:good|great|nice|sensible|handy)\s+(?:idea|plan|option))\W*$",
    # a bot that introduces itself ("I'm the assistant for Voltbridge Audio, an independent seller", "This is the shop
    # assistant for …", "I'm this seller's automated helper") and the attempt before a failed lookup ("I tried to check …")
    r"^\W*(?:(?:hi|hello|hey)\W+)?(?:i['’]m|i\s+am|this\s+is)\s+(?:the\s+|an?\s+|this\s+|your\s+)?(?:[\w'’-]+\s+){0,3}?"
    r"(?:assistant|bot|chatbot|helper)\b|^\W*(?:and\s+)?i\s+(?:tried|went|attempted)\s+to\s+(?:check|look|pull|find|fetch|search|get)\b",
    r"^\W*(?:many\s+)?(?:thanks|thank\s+you)(?:\s+(?:so|very)\s+much)?\s+for\b",
    # pointers to a person or a team
    r"\b(?:ask(?:ing)?|contact(?:ing)?|reach(?:ing)?\s+(?:out\s+to|us|them|our|the|your|a|an)\b|get(?:ting)?\s+in\s+touch\s+with|talk(?:ing)?\s+to|"
    r"ring|call|phon(?:e|ing)|e-?mail|visit|direct|messag(?:e|ing)|whatsapp|look\s+up|go\s+(?:through|to)|head\s+to|"
    r"come\s+from|address\s+yourself\s+to|put\s+you\s+through\s+to|transfer\s+you|connect\s+you|pass\s+you|escalate|"
    r"hand\s+you|one\s+for|write\s+to|chat(?:ting)?\s+(?:to|with)|rout(?:ed|ing)\s+to|"
    r"speak(?:ing)?\s+(?:to|with)|check(?:ing)?(?:\s+w(?:ith|/)?)?(?!\s+out\b)|confirm(?:ing)?\s+with|refer\s+(?:you\s+)?to|"
    r"keep(?:ing)?\s+an\s+eye\s+on)\b.*\b(?:agent|team|support|human|"
    r"representative|someone|staff|colleague|services?|desk|department|store|shop|branch|seller|retailer|manufacturer|"
    r"folks|people|crew|website|site|page|app|tab|account|channels?|office|advisor|adviser|till|locator|portal|helpline|"
    r"hotline|contact\s+us|counter|checkout|clients|the\s+till|care|location)\b",
    r"\bgiv(?:e|ing)\s+(?:the|your|our|them|us|him|her)\s+(?:\w+\s+){0,2}?(?:a\s+)?(?:quick\s+)?(?:call|ring|shout)\b",  # "give the shop a call"
    # sympathy: "Oh no, sorry your item arrived damaged!", "I'm sorry you're having trouble signing in"
    r"^\W*(?:and\s+)?(?:oh\s+no\W+)?(?:i['’]?m\s+|i\s+am\s+|we['’]re\s+|we\s+are\s+)?(?:so\s+|very\s+|really\s+|truly\s+)?sorry\s+"
    r"(?:to\s+hear\s+(?:that\s+|about\s+)?)?(?:you|your|it|that|this)\b",
    r"\border\s+(?:number|id|reference)\b",  # the order number asked for
    r"\b(?:agents?|team|support|human|representatives?|someone|staff|colleagues?|department|specialists?|experts?|customer\s+service|"
    r"advisors?|advisers?|folks|people|crew|centre|center|store|branch|pharmacist|gp|doctor|technicians?)\b.*"
    r"\b(?:ask|help|answer|assist|know|contact|tell|sort|handle|advise|review|check|confirm|guide|walk|look\s+(?:into|at)|"
    r"take\s+a\s+look|take\s+care\s+of|follow\s+up|get\s+back|point|assess|give|inform|notify|decide|pick\s+(?:this|it)\s+up|reply)|"
    r"\b(?:handled|answered|assessed|decided|reviewed|checked)\s+by\b|\bgoes?\s+(?:through|to)\s+(?:our|the)\s+(?:\w+\s+)?(?:team|department|desk)\b|"
    r"^\W*that['’]?s\s+(?:one\s+)?for\s+(?:our|the)\s+(?:\w+\s+)?team\b|\bi['’]?d\s+rather\s+you\s+(?:go\s+by|check|ask|look)\b|"
    r"\bdeferring\s+to\b|\blink\b.*\bbelow\b|^\W*(?:log\s*in|sign\s*in)\b|\bappears?\s+(?:at|before)\s+(?:checkout|you\s+pay)\b|"
    r"^\W*(?:pop|put|add)\s+(?:the\s+)?items?\s+(?:in|into|to)\s+your\s+(?:basket|cart)\b|\bwould\s+be\s+(?:made\s+up|a\s+guess|"
    r"guesswork|speculation)\b|\bwould\s*(?:n['’]t|not)\s+be\s+fair\b|\bwrong\s+(?:path|way|direction)\b",
    # where the answer is: "Your member account page or the loyalty team will have the figure that applies to you"
    r"^\W*(?:your|our|the)\b[^.;:!?]{0,60}?\b(?:page|team|app|account|portal|centre|center|desk|store|statement|support|"
    r"website|site)\s+(?:will|would|should)\s+have\s+(?:the|your|that|those|its|their)\s+(?:[\w-]+\s+){0,2}?(?:figures?|numbers?|"
    r"details|answer|information|amount|terms|requirements|criteria|threshold|specifics)\b",
    # … or who will know: "A customs broker or the carrier will know more"; the checkout that shows it: "Checkout will show
    # it", "Shipping eligibility gets checked at checkout"
    r"^\W*(?:an?|the|your|our)\b[^.;:!?]{0,50}?\s+(?:will|would|should|can)\s+know\s+(?:more|better)\W*$|"
    r"^\W*(?:the\s+)?checkout(?:\s+page)?\s+(?:will|would|should|can)\s+show\s+(?:it|you|that|them)\W*$|"
    r"^[^;,]{1,60}?\b(?:gets?|is|are)\s+(?:checked|calculated|confirmed|shown|determined)\s+at\s+(?:the\s+)?checkout\W*$",
    # the asker's next step, no fact of the shop's: "If your link no longer works, requesting a new one is the quickest fix"
    r"^\W*if\s+[^,;:]{1,60},\s*[a-z]+ing\b[^.;:!?]{0,40}?\s+(?:is|['’]s)\s+(?:the|your)\s+(?:quickest|fastest|easiest|simplest|"
    r"best|safest)\s+(?:fix|way|option|route|bet|step)\W*$",
    # what the person pointed to will do: "they'll know how that blazer fits", "they can look at your order"
    r"^\W*(?:and\s+)?(?:they|he|she)\s*(?:['’]ll|will|can|could|should|would|may|might)\s+(?:\w+\s+){0,3}?(?:know|help|look|"
    r"check|advise|confirm|tell|let\s+you\s+know|sort|trace|answer|arrange|assist|get\s+back|review|guide|pick|step\s+in|decide)\b",
    # offers: "If you share your order number, I can forward …"
    r"^\W*(?:if|once|when)\s+you\s+(?:can\s+|could\s+)?(?:share|send|provide|give|let\s+(?:me|us)\s+know|tell|"
    r"reply|confirm)\b|^\W*if\s+you(?:['’]d|\s+would)\s+(?:like|prefer)\b|^\W*if\s+you\s+(?:want|wish|prefer)\b|"
    # "Want me to open a request for you?"
    r"^\W*(?:do\s+you\s+)?want\s+me\s+to\s+(?:open|raise|create|log|connect|pass|transfer|forward|escalate|put)\b",
    r"^\W*for\s+(?:\w+\s+){0,3}(?:questions?|queries|enquiries|inquiries|matters|issues)\W*$|^\W*for\s+(?:\w+\s+)?\w+\W*$",  # a topic
    # greetings, sign-offs, what the answerer is
    r"^\W*(?:dear|hi|hello|hey|greetings|good\s+(?:morning|afternoon|evening)|sir|madam|ma['’]am|hola|bonjour|namaste)\b|"
    r"^\W*(?:kind|best|warm)(?:est)?\s+regards\b",
    r"^\W*(?:sincerely|cheers|thx|thanks)\W*$",
    r"^\W*(?:the\s+)?(?:[a-z]+\s+){0,2}(?:team|care|support|service|desk|centre|center|assistant|bot)\W*$",
    r"\bas\s+an?\s+(?:ai|virtual|digital|automated|online)?\s*(?:assistant|bot|chatbot|agent)\b",
    # the question said back, a topic, a heading
    r"^\W*(?:you['’]re|you\s+are)\s+(?:asking|wondering)\b|^\W*you(?:['’]ve)?\s+asked\b|"
    r"^\W*you(?:['’]d|\s+would)\s+like\s+to\s+know\b|^\W*you\s+want\s+to\s+know\b",
    r"^\W*(?:(?:sorry|apologies|hi|hello|ehn|okay|ok|so|right|well|yep|yeah|oh|ah)\W+)*(?:as\s+(?:for|to)|regarding|concerning|"
    r"with\s+regard\s+to|about)\b[^:：,，]{0,60}"
    r"(?:,\s*(?:sorry|unfortunately|apologies|the|this|our|my|(?:i\s+am|i['’]m|we\s+are)\s+sorry))?\W*$|"
    r"^\W*you\s+mentioned\b",
    # courtesy: "We truly appreciate your interest", "I completely understand how frustrating …", "Should you have any
    # other questions …", "have a lovely day", "Thank you again for your patience and understanding"
    r"^\W*(?:and\s+)?(?:i|we)\s+(?:\w+\s+){0,3}?(?:appreciate|understand)\b|\bshould\s+you\s+(?:have|need|require)\b|"
    r"\b(?:do\s+not|don['’]t)\s+hesitate\b|\b(?:our|my)\s+(?:\w+\s+)?pleasure\b|\bhave\s+a\s+(?:\w+\s+)?(?:day|evening|weekend)\b|"
    r"\bthank\s+you\s+(?:again\s+|kindly\s+)?for\s+your\s+(?:kind\s+)?(?:patience|understanding|message|enquiry|inquiry|question|"
    r"cooperation)\b|"
    r"\bwe\s+thank\s+you\b|\bstill\s+learning\b",
    # a reason not to answer: privacy, a limited scope, facts that change or depend, sources about something else
    r"\bfor\s+(?:privacy|security|data\s+protection)\s+reasons\b|\bworth\s+getting\s+right\b|^\W*for\s+your\s+(?:protection|security|safety)\b|"
    r"\b(?:my|our)\s+(?:role|scope|remit|retriever|search|tools?|access)\s+(?:is|are)\s+limited\s+to\b|"
    r"\bfalls?\s+(?:under|outside)\s+(?:the\s+|our\s+|my\s+)?(?:\w+\s+)?(?:services|matters|topics|scope|remit|category|area|"
    r"department)\b|\ba\s+question\s+for\s+(?:our|the|a)\b|\boff\s+the\s+table\b",
    r"\bout\s+of\s+date\b|\boutdated\b|\bsubject\s+to\s+change\b|\b(?:can|may|might|could)\s+(?:change|vary)\b|"
    r"\b(?:rules|times|prices|policies|terms|rates|hours)\s+(?:\w+\s+){0,3}?var(?:y|ies)\b|"
    r"\bdepends?\s+on\s+(?:\w+\s+){0,2}?(?:details|circumstances|situation|case)\b|\b(?:each|every)\s+(?:case|situation|order)\s+"
    r"(?:is|may\s+be|can\s+be|might\s+be)\s+different\b",
    r"\b(?:is|are|was|were)\s+for\s+(?:a\s+)?(?:different|another)\s+(?:\w+\s+)?(?:branch|store|product|location|item|model)\b|"
    r"\b(?:was|were)\s*(?:n['’]t|not)\s+among\s+(?:them|those|these)\b|"
    r"\b(?:do\s*n['’]?t|do\s+not)\s+want\s+to\s+(?:send|point|direct)\s+you\b",
    # labels, and what is asked of the customer: "Plan:", "RE: …", "Reference: CONTEXT_INSUFFICIENT", "**Short answer:",
    # "Could you clarify which …", "Kindly raise a return request", "Take your time", a topic with a particle ("the
    # return period ah")
    r"^\W*(?:plan|next|step|then|outcome|result|action|observation|thought|reference|ref|error\s*code|category|confidence|"
    r"handoff|message|status|notice|"
    r"sources?_used|note|grounded|reason)\s*:|^\W*(?:re|fwd?|subject)\s*:|"
    r"^\W*(?:the\s+)?(?:short|quick|brief)\s+answer\W*$|^\W*(?:tl;?dr|in\s+short|answer|note|update)\W*$",
    r"^\W*(?:could|can|would)\s+you\s+(?:please\s+)?(?:clarify|specify|tell\s+me|let\s+me\s+know)\b|"
    r"^\W*(?:please|pls|kindly)\s+(?:share|send|provide|see|refer\s+to|raise|open|submit|lodge|check|visit|contact|call)\b|"
    r"^\W*take\s+your\s+time\W*$|\b(?:ah|leh|lah|hor)\W*$",
    # advice, and where the figure is
    r"\b(?:should|may|might|could)\s+help\b|\bwill\s+(?:show|display|list)\s+(?:you\s+)?the\s+(?:exact|latest|current|final|"
    r"full)\b",
    # sympathy said shortly, and a persona introduced: "I'm Lena, your store assistant"
    r"\bbest\s+bet\b|^\W*(?:i\s+(?:can\s+)?see|i\s+hear\s+you)\b|\bi\s+get\s+it\b|"
    r"\bthat['’]s\s+(?:annoying|frustrating|a\s+pain|rough|tough|a\s+(?:shame|pity))\b|\b(?:rough|bad|hard)\s+luck\b|"
    r"^\W*(?:i['’]?m|i\s+am|this\s+is|my\s+name\s+is)\s+\w+,?\s+(?:from\s+.{0,30}|(?:your|the|an?)\s+(?:\w+\s+){0,2}(?:assistant|bot|"
    r"agent|helper|advisor|concierge))\W*$",
    # a tool or a search: down, failing, or reporting on other topics ("`search_kb` only surfaced articles on …"); try later
    r"\b(?:tool|system|service|database|lookup|tracker|tracking|feature|function)\s+(?:is\s+|are\s+)?(?:currently\s+|temporarily\s+|"
    r"presently\s+)?(?:unavailable|down|offline|not\s+available|under\s+maintenance)\b|^\W*(?:please\s+)?try\s+again\b|"
    r"\b(?:tool|system|lookup|search|tracker)\s+(?:is\s*n['’]t|is\s+not|was\s*n['’]t)\s+(?:responding|working|loading)\b",
    r"\bfailed\s+with\s+(?:an?\s+)?(?:\w+\s+)?error\b|"
    r"\b(?:tool|system|lookup|search)\s+(?:\w+\s+){0,2}?(?:responded|returned|came\s+back|failed)\s+with\s+(?:an?\s+)?error\b|"
    r"^\W*(?:my|the)\s+(?:search|lookup|query)\s+(?:returned|found|came\s+back)\b|"
    r"\b(?:surfaced|returned|found|brought\s+up)\s+(?:\w+\s+){0,2}?(?:articles?|documents?|results?|pages?)\s+(?:on|about)\b",
    # a reasoning model's preamble ("Let me think about this.", "they're asking about …"), a phone menu, a heading
    r"^\W*(?:let\s+me\s+think|thinking|\(?thought\)?|okay,?\s+so)\b|\b(?:they|the\s+user|the\s+customer)(?:['’]re|\s+is|\s+are)\s+"
    r"asking\b|\bmain\s+menu\b|^\W*press\s+\w+\W*$|^\W*[\w\s]{1,30}\binfo\W*$|^\W*whether\b.*\b(?:decision|call)\W*$",
    # what was searched, and why not to guess
    r"^\W*(?:i\s+(?:have\s+|just\s+|also\s+)?)?(?:searched|looked\s+(?:up|through|for)|checked|queried|went\s+through|"
    r"combed\s+through|had\s+a\s+look|reviewed)\b|^\W*(?:i\s+)?(?:ran|did|performed)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}(?:lookup|search|query)\b|"
    r"^\W*(?:the\s+)?(?:top|first|best|only)\s+(?:hit|result|match)\b|^\W*(?:but\s+)?(?:it|they)\s+(?:only\s+)?(?:deals?|talks?)\s+"
    r"(?:with|about)\b|^\W*(?:(?:hmm+|so|ok(?:ay)?|well|ah|oh)\W+)*what\s+i\s+(?:have|['’]ve\s+got|pulled\s+up|found)\b[^.]{0,40}?\b(?:talks?|is|are|covers?|deals?)\b|"
    r"\b(?:article|passage|page|document|info|notes)\s+(?:i\s+have\s+|i['’]ve\s+got\s+)?(?:walks\s+through|covers|talks\s+about|deals\s+with|"
    r"is\s+about|explains)\b|^\W*(?:checked|suggested\s+next\s+step|policy\s+flag|message\s+to\s+user)\s*:",
    # a tool called ("→ search_kb(…)"), what the sources are about ("The retrieved passage talks about …", "is specific to
    # another product category", "only have info on one location"), the question said back ("Your message appears to
    # relate to …"), a reason ("To protect your security", "legal implications"), where to find them
    r"^\W*`?[a-z]+_[a-z_]+\s*\(|^\W*(?:(?:so|okay|ok|right|well|and|ah|oh)\W+)*for\s+(?:the\s+)?\w+(?:\s+\w+)?\W*$|"
    r"^\W*(?:okay|ok|right|alright|so)\s*,\s*(?!.*\b(?:is|are|was|were|can|will|do|does|has|have|had|costs?|takes?)\b)"
    r"(?:[\w-]+\s*){1,4}\W*$|^\W*(?:the|this|my)\s+(?:retrieved\s+|provided\s+|only\s+)?(?:passage|document|article|result|"
    r"source|text)s?\s+(?:\w+\s+)?(?:talks?|is|are)\s+(?:about|on)\b|\b(?:specific\s+to|about|covers?)\s+(?:a\s+)?(?:different|"
    r"another|other|unrelated)\s+(?:\w+\s+)?(?:products?|categor(?:y|ies)|subjects?|topics?|items?|models?|locations?|stores?)\b|"
    r"\bis\s+for\s+a\s+(?:different|another)\s+(?:\w+\s+)?(?:products?|categor(?:y|ies)|models?)\b|\brather\s+than\s+(?:other|another|"
    r"different)\b|\b(?:page|site|website|app)\s+has\s+the\s+(?:current|latest|exact)\b|\bring\s+(?:them|us|the\s+store)\b|"
    r"^\W*(?:i\s+)?only\s+have\s+(?:info|information|details|data)\s+(?:on|about|for)\b|"
    r"^\W*your\s+(?:message|question|query|request|enquiry|inquiry)\s+(?:appears|seems)\s+to\b|^\W*to\s+protect\s+your\b|"
    r"\blegal\s+implications?\b|\byou['’]?ll\s+find\s+(?:them|it|this|that)\b",
    r"\bguess(?:ing|es)?\b|\bspeculat|\bhazard\b|\bmislead|\bmisinform|\b(?:wrong|inaccurate|incorrect)\s+(?:info|information|"
    r"answers?|details)\b|\b(?:hate|not\s+wish|not\s+want)\s+to\s+(?:tell|give|say)\b|\b(?:inaccurate|isn['’]t\s+correct|incorrect)\b",
    r"^\W*(?:describe|gather|prepare|note\s+down|include|mention|have\s+your)\b",  # steps to reach support
    r"^\s*#{1,6}\s",
    r"^\W*(?:(?:okay|ok|so|right|yep|yeah|well|oh|ah|alright|hmm+|um+|uh+|erm?)\W+){2,}(?!.*\b(?:is|are|was|were|can|will|do|does|has|"
    r"have|had|costs?|takes?)\b)(?:(?:the|a|an|your|about|for|on)\s+)*(?:[\w-]+\s*){1,4}\W*$|"
    r"^\W*(?:(?:okay|ok|so|right|yep|yeah|well|oh|ah|alright)\W+)+.*\b(?:is|are|was|the|a|an|our|my|your)\W*$",
    r"\b(?:is|are)\s+(?:a\s+)?matters?\s+of\s+(?:\w+\s+)?(?:security|privacy|safety|protection)\b|"
    r"^\W*(?:please\s+|kindly\s+)?(?:bring|take)\s+(?:the|your|it)\b.*\b(?:them|store|specialists?|technicians?|team|centre|center)\b",
    # stock replies and guardrails ("answer: UNAVAILABLE", "[Policy Notice]"; their other labels are with the planner's
    # above), an automated reply, what the assistant answers from, advice it may not give; an agent's step told ("Ran
    # `policy_search(…)`", "The `refund_rules` lookup returned …", "Retry → returned … only", "my instructions say")
    r"^\W*\[[^\]]{1,30}\]|"
    r"^\W*answer\s*[:：]\s*(?:unavailable|none|null|n/?a|unknown|无|暂无)\W*$|\bautomated\s+(?:reply|response|message)\b|"
    r"\banswers\s+only\s+from\b|\bmay\s+constitute\b|\b(?:legal|medical|financial|contractual)\s+advice\b",
    r"^\W*(?:ran|called|invoked|executed|queried|tried)\s+`|"
    # the question said back ("so you'd like to change …", "the customer wants the threshold"), a topic before a comma
    # ("Regarding the gift wrapping service, at present", "… for UK orders ah, this one"), the documents a search gave
    r"^\W*(?:(?:okay|ok|alright|right|so)\W+)*(?:you(?:['’]d|\s+would)\s+like\s+to|you(?:['’]re|\s+are)\s+(?:asking|"
    r"wondering|looking\s+to|hoping\s+to))\b|^\W*it\s+(?:sounds|seems)\s+like\s+you(?:['’]re|\s+are|['’]d\s+like|\s+would\s+like|"
    r"\s+want|\s+need)\b|\bthe\s+(?:customer|user)\s+(?:wants|needs|would\s+like|is\s+after)\b|"
    r"^\W*(?:regarding|concerning|as\s+(?:for|to|regards)|with\s+regards?\s+to)\s[^.;:!?,]{1,50}(?:,\s*(?:at\s+present|"
    r"currently|right\s+now|for\s+now|at\s+the\s+moment))?\W*$|\b(?:this|that)\s+one\W*$|^\W*i\s+(?:have|got|found|retrieved)\s+"
    r"(?:a|an|one|two|three|\d+)\s+(?:[\w-]+\s+){0,2}?(?:documents?|passages?|results?|articles?|sources?)\W*$|"
    # an agent's tool named ("I ran kb_search for …", "Running warranty_check", "with the order_status tool"), an attempt
    # told ("I tried to pull up your order"), a handoff between agents
    r"^\W*(?:i\s+)?(?:ran|run|running|called|calling|invoked|used|using|tried|queried)\s+(?:the\s+)?`?[a-z]+_[a-z_]+\b|"
    r"\b(?:with|via|using)\s+the\s+`?[a-z]+_[a-z_]+`?\s+(?:tool|function|api)\b|"
    r"^\W*(?:so\s+)?i\s+(?:tried|attempted)\s+to\s+(?:pull|look|check|find|fetch|get|retrieve|search|access|open|load|reach)\b|"
    r"\b(?:routed|handed|passed|transferred)\s+from\s+the\s+(?:\w+\s+){0,2}agent\b|^\W*(?:the\s+)?`[^`]{1,60}`\s+(?:lookup|call|tool|search|query)\b|"
    r"^\W*retry\b|\breturned\s+(?:\w+\s+){1,3}only\b|\bmy\s+instructions\s+say\b|\bmust\s+come\s+from\b|"
    r"\b(?:ye|you)['’]?d\s+be\s+best\b|"
    # what the search found instead ("the closest match was about resetting passwords"), a question praised
    r"\b(?:closest|nearest|only|best)\s+(?:match|hit|result)\s+(?:i\s+(?:got|found|have)\s+)?(?:was|is)\s+(?:about|for|on)\b|"
    r"^\W*(?:(?:that|it)['’]?s\s+)?(?:a\s+)?(?:really\s+|very\s+)?(?:good|smart|wise)\s+(?:thing|idea|call)\s+to\s+(?:check|ask|"
    r"confirm)\b",
)
_ZH_AROUND = (
    r"^[\s，,]*(?:(?i:sorry|apologies)[\s，,—–-]*)?(?:很|非常|真|实在|十分|万分|深表)?(?:抱歉|不好意思|对不起|遗憾|谢谢|感谢|歹势)"
    r"[^，。；！？]{0,10}$",
    r"^作为(?:一个|一名)?(?:AI|ai|人工智能|智能)?(?:助手|客服|机器人)|^方便(?:的话)?|订单号|订单编号",
    r"(?:跟|和|与|找|问下?|问一下|联系|咨询)\s*(?i:[a-z]+\s+){0,2}?(?i:support|service|team|agent|cs|staff)\b|"  # 跟 support team 确认
    r"人工|客服|客户服务|转接|工作人员|专员|专人|同事|售后|药剂师|医生|请洽|洽询|(?:服务|维修|售后)中心|找[^，。；！？]{0,12}team|店小二|负责人|详情页|随时|欢迎|竭诚|敬请|为准|部门|热线|坐席",
    # a reason and what closes a letter: the system is down, try later, the rules, 特此说明, still learning, 祝您…
    r"系统[^，。；！？]{0,8}?(?:无法使用|不可用|维护|故障|升级|繁忙|异常)|稍后再试|稍后重试|"
    r"(?:牵涉到?|涉及到?|关系到|关乎)[^，。；！？]{0,6}(?:钱|资金|账户|隐私|安全)的?(?:事|问题)$|"  # a reason: it is about money^根据(?:相关|有关)?(?:规定|要求|政策)$|"
    r"^特此(?:说明|告知|通知|函告)$|(?:还|正|仍)在学习|^祝(?:您|你)|尽快为(?:您|你)|为(?:您|你)(?:处理|服务|解答|评估|核实)",
    # the question said back, a rephrase suggested, what the sources are about, a reason, sympathy, who will help
    r"^(?:您|你)(?:询问|咨询|想问|问|提到|反映|关心|关注)的(?:是|问题)|^(?:比如|例如)|换个(?:说法|问法)|其他(?:方面|主题|话题)的?(?:内容|问题)|"
    r"需要根据(?:具体|实际)情况|视具体情况而定|^(?:这个|此|该|您的)?问题涉及|涉及[^，。；！？]{0,6}?(?:隐私|安全|金融|法律|医疗|具体|个人(?:资料|信息))|让人(?:不太?|很)?(?:开心|高兴|郁闷|着急|生气|烦)|确实(?:很|挺|让人)?(?:着急|难受|郁闷|烦心?|麻烦)|"
    r"^(?:他们|伊拉)(?:会|将|可以)|由他们|耐心(?:地)?等待|前往[^，。；！？]{0,12}(?:页面|页|中心|门店)|由[^，。；！？]{0,6}(?:人员|工程师|客服|同事|专员)为(?:您|你)",
    # where to look or whom to ask: 您可以在App内【我的-会员中心】查看, 加一下课程顾问老师的微信问问
    r"^(?:还?请(?:您|你)?|您|你)?(?:也)?(?:可以|可)?(?:在|到|去|至)[^，。；！？]{0,20}?(?:查看|查询|了解|咨询)|"
    r"(?:问问|问一下|问下|咨询一下)看?[哦呢吧啦～~]*$|^(?:你|您)(?:可以|可)\s*(?:check|看看|看下|查看)",
    r"^(?:此致|敬礼)|^也?(?:非常|很|十分|完全)?理解(?:您|你)|^(?:建议|麻烦)(?:您|你)|^(?:您|你)?(?:可以|可)?(?:问下|问一下|问问)",
    r"^(?:若|如果|如|要是)(?:您|你)(?:能|可以|方便)?(?:提供|告诉|留下|发送|补充)|^如(?:有|需)(?:需要|帮助)?|"
    r"^(?:若|如果|如|要是)(?:您|你)(?:有)?(?:需要|需求)$|^(?:您|你)?(?:如果|要是)[^，。；！？]{0,6}的话$|^(?:若|如果|如|要是)(?:您|你)(?:急需|想要|希望)|留意[^，。；！？]{0,6}(?:公告|通知)|工单",
    r"^(?:我)?(?:已经?|先|再)?(?:为(?:您|你))?(?:(?:在|用|通过)[^，。；！？]{0,10})?(?:搜索|检索|查询|查找|查阅|翻阅)(?:了|过|了一下)?[“\"「‘]|"
    r"^(?:我)?(?:已经?|先|再)?(?:(?:在|用|通过)[^，。；！？]{0,10})?(?:搜索|检索|查询|查找|查阅|翻阅)到?(?:了|过)|乱猜|瞎猜|说错|误导|凭空|"
    r"错误(?:的)?信息|乱说|瞎说|乱讲|^为了?避免|^避免|^以免|^免得|对不上|具体要看|(?:说|讲|针对)的是(?:别的|其他)|"
    r"(?:内容|结果|资料)[^，。；！？]{0,8}(?:无关|没有?关系)|^里面(?:只)?(?:讲|说|写)的?是|老实说|说实话|坦白说|"
    r"(?:资料|文档|说明|内容|结果)(?:里|中)?[^，。；！？]{0,2}(?:讲|说|写|涉及)的(?:是|都是)|^(?:我)?(?:查|检索|搜索)到的(?:是|都是)|"
    r"^(?:我|这个)?(?:非常|很|完全)?(?:理解|明白)(?:您|你)|^(?:您|你)把[^，。；！？]{0,8}(?:加进|加入|放进)购物车|"
    r"(?:结算页|页面)[^，。；！？]{0,4}(?:会)?(?:直接)?显示|看一下就(?:清楚|知道)|(?:打开|进到|进入)[^，。；！？]{0,16}(?:看一下|查看|看看)|"
    r"(?:跟|和|找)(?:他们|她们)[^，。；！？]{0,12}(?:确认|check|核实|问)|心疼|^(?:这个|我)?我*(?:查|看|翻)(?:了一?下|了|过)|"
    r"(?:检索|搜索|查)到的[^，。；！？]{0,6}(?:讲|说|涉及|是关于)|^(?:您|你)(?:可以|可)?(?:看一下|看看|看下)|"
    r"(?:在|到)[^，。；！？]{0,12}页面?[^，。；！？]{0,4}(?:可以|能)?(?:看到|查看)|^建议(?:您|你)?(?:到|去|在)[^，。；！？]{0,16}页面?|"
    r"(?:瞅|看)一眼|^(?:这个)?我+看了一?下|^[呃嗯啊哦额]+[^，。；！？是可能会要]{1,10}[哈啊呀嘛]*$|"
    r"^在[^，。；！？]{0,12}(?:文档|资料|知识库|材料)(?:里|中|之中|内)$|^(?:对于|有关)[^，。；！？]{0,20}(?:问题|询问|咨询|请求|事宜)$|"
    r"^(?:您|你)(?:提出|询问|咨询|提到|反映)的[^，。；！？]{0,20}问题$|^[^，。；！？]{1,12}(?:这些嘢|这类问题|这事儿?|这件事|这块)$",
    r"^(?:(?:还?请|您|你|麻烦)(?:您|你)?(?:可以|可)?(?:先)?(?:去)?(?:做)?)?(?:准备|说明|描述|提供|登录|等待|留下|提交|填写|联系|参考|参阅|咨询|重新)|"
    r"把[^，。；！？]{0,8}(?:发来|发给|发送)|^【[^】]{1,8}】[\s，,]*(?:抱歉|不好意思|对不起)?[\s，,。]*$",  # steps to reach support, a label
    # a reason: for your safety (为保障您的…, 出于…考虑), what a question touches (涉及…问题, 属于营销信息), facts that depend or
    # change (受多种因素影响, 要看具体情况, 可能已有调整), who must decide (须由维修中心确认)
    r"^为了?(?:保障|保护|确保)(?:您|你)|^(?:涉及|有关)[^，。；！？]{0,12}(?:问题|事项|事宜)$|^出于[^，。；！？]{0,12}(?:考虑|原因)|^(?:由于|因为)(?:涉及|属于)[^，。；！？]{1,12}$|"
    r"属于[^，。；！？]{0,6}(?:营销|敏感|内部|隐私|金融)|受[^，。；！？]{0,6}因素影响|要看(?:具体|实际)?情况|"
    r"可能(?:已有|已经|有所|会有)?(?:调整|变化|变动|更新)|(?:需要|须|要)由[^，。；！？]{0,8}(?:判断|确认|决定|审核|处理)",
    # the question said back or a topic: 能否… and A-not-A (管不管), 归谁出, 还是别的, …的安排, …这块儿, 您问这个…, 用户问的是…
    r"^[^，。；！？]{1,12}(?:能否|能不能|可否)[^，。；！？]{0,10}$|(?P<a_not_a>.)不(?P=a_not_a)|(?:归|由)谁|还是(?:别的|其他)|"
    r"^(?:你|您|是)(?:要|想)[^，。；！？]{0,10}还是|^(?:好的)?(?:您|你)(?:是)?(?:想|想要|要)[^，。；！？]{1,12}(?<!的话)$|^[^，。；！？]{2,16}的(?:安排|情况|规定|事宜|事项|处理方式|办法|流程|地址|营业时间)"
    r"(?:(?:和|以及)[^，。；！？]{1,6})?$|相关的?(?:问题|事宜|事项|事情?)$|"
    # … and a topic whose head is what was asked for (加急配送的费用和时效, 维修期间的备用机安排, 换颜色的需求), not a
    # condition (如果是商品本身的质量问题, a claim's)
    r"^(?!如果|若|要是|假如)[^，。；！？是]{2,16}的[^，。；！？是可能会要能]{0,4}(?:安排|需求|时效|费用|事情?|问题)"
    r"(?:(?:和|以及)[^，。；！？]{1,6})?$|"
    r"(?:这块儿?|这一块|这方面|这个|这部分|这件事|这种事|这个问题|这类问题)[啊呀哈呢]?$|^(?:如|若|如果)(?:您|你)?方便(?:的话)?$|的部分$|^(?:您|你)问(?:的)?这个|^(?:请问)?(?:您|你)(?:指的是|是指|说的是)|用户(?:在)?问(?:的是)?|"
    r"^(?:好的[，,]?)?(?:让我|我来)想想|^[^，。；！？]{0,16}(?:是否|如何|怎么|怎样|多少|多久|点处理|什么时候|何时)[^，。；！？]{0,12}$|几(?:趟|次|回)$|"
    r"^[^，。；！？是可能]{1,10}(?:是吧|啊|呀|的话)$|问问[^，。；！？]{0,6}吧$",
    # an agent's tools and searches: called (我调用了…工具, 再调用 `get_product`), failing (调用超时, 接口暂时无响应), cut short
    # (步数已用尽), or finding other things (只拿到…, 检索到的内容讲的是…, 结果都和…有关, 资料仅涉及…)
    r"^(?:我)?(?:已经?|先|再|又)?(?:试着|尝试)?(?:调用|使用|用|执行|通过)了?(?:[^，。；！？]{0,24}(?:工具|接口)|\s*`|\s*[A-Za-z]+_[A-Za-z_]+)|"
    r"^\s*`|"
    r"(?:检索|查询|关键)词为|(?:必须|须)来自|可能构成|^(?:思考|行动|观察|最终回复|错误码|错误代码|类别|操作|处理方式|原因)\s*[：:]|"
    r"(?:查询|系统|工具|接口|调用)[^，。；！？]{0,24}?(?:超时|报错|出错|错误|异常|失败|被拒绝)|(?:接口|系统|工具)[^，。；！？]{0,4}(?:无响应|没有?响应)|"
    r"步数已?用尽|迭代次数|从头处理|只能?(?:返回了?|拿到|找到|检索到|查到)|(?:检索|搜索)到的(?:内容|资料|文档|结果)[^，。；！？]{0,4}(?:讲|说)的是|"
    r"(?:结果|资料|文档|内容)[^，。；！？]{0,4}都?(?:和|与|跟)[^，。；！？]{0,10}有关|"
    r"(?:文档|资料|知识库|检索结果|内容|片段|结果|说明)[^，。；！？]{0,6}(?:[只仅]|净系)(?:有|包含|涉及|提到|讲|说)|只讲了|仅说明",
    # where to look, whom to ask, and wait: 建议直接联系…, 稍后再来, 稍等, 瞅瞅吧, 留意活动页面, page 上面应该有…, 问题暂不支持
    r"^(?:建议|麻烦)(?:您|你)?(?:直接)?(?:联系|咨询|找)|稍后再来|稍等|(?:瞅瞅|瞧瞧|看看)吧?$|(?:留意|关注)[^，。；！？]{0,8}(?:页面|活动|公告|通知)|"
    r"(?:page|页面)[^，。；！？]{0,6}应该有|(?:问题|咨询)暂不支持$",
    r"^(?:关于|至于|您问的|你问的|您说的)|^(?:您|你)(?:是)?(?:想|想要|希望)(?:了解|知道|确认|咨询|问)|^(?:亲|您好|你好|尊敬的)",
    # sympathy, reassurance and a remark on the asker's step: 辛苦啦, 别着急, 这种情况挺常见的, 注销账号是个挺重要的决定
    r"遗憾(?:地)?(?:听到|得知)|辛苦(?:啦|了|你|您)|^(?:别|不要|不用)(?:着急|担心|急|慌)[哈啊呀哦呢啦嘛～~！!\s]*$|情况[^，。；！？]{0,2}(?:挺|很|比较|非常)?常见|"
    r"是(?:个|一个)?(?:挺|很|比较|非常)?重要的(?:决定|操作|事情?)|听起来(?:很|挺|蛮|非常|确实)?(?:方便|不错|合理|省事)的?[啊呀哈呢]?$",
    # a reason (由于获取不到您的订单信息), the results beside the point (但与修改发票抬头无关), whom to ask (问售后吧, 让技术人员看一下,
    # 他们会根据您的情况给您说明), where to look yourself (下单页自己看)
    r"^(?:由于|因为)[^，。；！？]{0,16}(?:获取不到|查不到|看不到|拿不到|无法|没法|不能|未能)|"
    r"^(?:但|不过|可是|但是|却)?(?:都|也|均)?(?:与|和|跟)[^，。；！？]{1,16}(?:无关|不相关|没关系|没有关系)$|"
    r"^(?:去|可以|直接|也可以|或者?)?(?:问|找|联系|咨询)(?:一下|下|问)?[^，。；！？]{0,8}(?:客服|售后|人工|店员|门店|同事|银行|商家|卖家)"
    r"[吧哈啊呀哦]*$|^让[^，。；！？]{0,8}(?:人员|同事|师傅|工程师|客服)|"
    r"^(?:他们|她们|对方|客服|同事|售后)会[^，。；！？]{0,16}(?:说明|答复|回复|解答|处理|核实|确认|联系)|自己(?:看|查|瞅)",
)
_AROUND = re.compile("(?i:" + "|".join((*_EN_AROUND, *CASUAL_AROUND)) + ")|" + "|".join((*_ZH_AROUND, *CASUAL_ZH_AROUND)))  # chat's: casual.py
# Whatever numbers they hold: an agent's report that its search found nothing ("Tool result: 0 documents", 查询结果：0
# 笔资料) and the steps to reach support ("1) note down your order number", 您可以：1. 准备好订单号)
_NOTHING_FOUND_OR_STEPS = re.compile(
    r"(?i:\b(?:no|0|zero)\s+(?:matching\s+|relevant\s+|new\s+)?(?:results?|documents?|docs|matches|hits|records)\b|"
    # a tool that failed or timed out, a retriever's scores, a call and what it returned, a code for reference
    r"\bnothing\s+(?:that\s+)?(?:came\s+(?:back|up)|turned\s+up)\b|\bneither\s+(?:mentions|covers|says|gives|lists|has)\b|"
    r"\btool\s+call\s+failed\b|\btimed?\s*out\b|\btimeout\b|\bgateway\b|\breturned\s+(?:an?\s+)?[`'\"]?[45]\d\d\b|"
    r"\bscore\s*[:=]?\s*\d[\d.]*\W*\(?\s*threshold\b|\b[a-z]+_[a-z_]+\s*\([^)]*\)[`'\"]?\s*(?:→|->|returned)|"
    r"[:：|]\s*[-–—]\s*\|?\s*$|"  # a form's field left blank
    r"^\W*(?:reference|ref|error\s*code|ticket|case)\s*[:：#]\s*[a-z0-9_-]+\W*$|\border\s*#\s*\d+|"
    r"^\W*retrieved\s+\d+\s+(?:passages?|documents?|results?|chunks?)\b|"
    r"^\W*(?:that|this|it)\s+(?:sounds|must\s+be)\s+(?:so\s+|really\s+)?(?:frustrating|annoying|stressful|rough|tough|a\s+pain)\b|"
    r"\bmatches\s*:\s*(?:none|0)\b|\bfailed\s+to\s+(?:return|find|retrieve)\b|\btool\s+(?:result|output)\b|"
    r"^\W*(?:here['’]s\s+what\s+you\s+can\s+do|if\s+it\s+helps)\b|"
    # a log's own lines: a confidence, a step counter, a transcript's or a draft's header, a sign-off's question
    r"\bconf(?:idence)?\s*[:=]?\s*(?:0?\.\d+|low|medium|high)\b|\bstep\s+\d+\s*(?:of|/)\s*\d+\b|\bpaused\s+at\b|"
    r"^\W*(?:draft|suggested\s+(?:draft|reply)|note\s+to\s+(?:agent|staff)|voice\s+line|transcript)\b|"
    r"^\W*(?:is\s+there\s+)?anything\s+else\b|"
    r"^\W*\d{1,2}[.)]\s*(?:gather|prepare|note|have|describe|contact|provide|wait|include|mention|keep|call|email|reach|log)\b)"
    r"|(?:工具返回|检索|搜索|查询)[^。！？]*?(?:\b0\s*[条笔个份]|零条|无匹配|没有匹配|无结果|没有结果|未返回)"
    r"|^(?:返回|命中)\s*\d+\s*[条个份篇]|(?:检索|搜索|查询|查到|找到|返回)了?\s*(?:\d+|一|两|几)\s*[条个篇份](?:结果|内容|资料|文档|记录)?$"
    r"|(?:服务|接口)[^，。；！？]{0,4}不可用|错误\s*[：:]|稍后再(?:问|试|来)|(?:过|等)(?:一会儿?|会儿|几分钟|一阵子?)再(?:问|试|来|咨询)|"
    r"(?i:\btry\s+(?:\w+ing\s+)?again\b)|^(?:请求|调用)?超时"
    r"|第\s*\d+\s*步|已暂停|^——\s*\S{1,6}$|^(?:您|你)?可以[：:]|^\W*\d{1,2}\s*[.)）、]\s*(?:准备|联系|提供|说明|登录|等待|描述|拨打|致电|留下)")
_TOPIC_LINE = re.compile(r"(?i:^\s*#{1,6}\s|^\W*<[^<>\n]{1,80}>\W*$|^\W*[\[<(][^\]>)\n]{0,60}[|=][^\]>)\n]{0,60}[\]>)]\W*$|^\W*\^?[A-Z]{2,3}\W*$|^\W*[A-Z][a-z]+,\s+(?:[A-Z][a-z]+\s*){1,3}$|^\W*(?:final\s+answer|answer|outcome|result|response|note|status|thought|action|"
                         r"observation|resolution)\W*$|^\W*\*\*[^*]{1,40}\*\*\W*$|^\W*(?:doc(?:ument)?|source|ref)\s*#?\d+\W*$|"
                         r"^\W*(?:refs?|sources?|see)\s*[:：]|^\W*(?:regarding|concerning|as\s+(?:for|to))\b[^.!?]*[:：]\s*$)"
                         r"|^\W*(?:关于|至于)[^。！？]*[:：]\s*$")


_GREETING_LEAD = re.compile(r"(?i:^\W*(?:dear|hi|hello|hey|greetings|good\s+(?:morning|afternoon|evening))\b[^,!:.]{0,30}"
                            r"[,!:.]\s*)")
# The word asked about explained first, by a plain-language assistant ("A warranty is a promise to fix …", "“Installments”
# means paying a little at a time", “差价”就是两个价格之间差的钱): a definition, nothing of the shop (around_a_refusal
# holds the word to the question's: '"Hourglass" is a song by …' and '"Valid" means …' for a gift card say something)
_DEFINED = re.compile(r"(?i:^\W*an?\s+(?P<word>(?:[\w-]+\s+){0,2}?[\w-]+)\s+is\s+(?:an?|when|where)\s|"
                      r"^\W*[\"“‘'](?P<quoted>[\w\s-]{1,30})[\"”’']\s+means\s)|"
                      r"^[“\"「‘'](?P<zh>[^”\"」’']{1,10})[”\"」’'](?:就是|是指|指的是|的意思是|意思是)")
_ASIDE_UNITS = 3  # terms of a clause around a refusal that shares nothing with the question or the context
# A short Chinese clause with a predicate says something ("不过台湾是可以寄的"): a claim, where "Weekend delivery" and
# 关于时效 only name a topic
_ZH_PREDICATE = re.compile("是|可以|能|会|支持|需要")
# So does a short English clause that opens with a subject ("Yes, we deliver to Australia")
_EN_STATEMENT = re.compile(r"(?i:^\W*(?:(?:yes|no|yeah|yep|nope)\W+)?(?:we|it|they|this|that|these|those|he|she)\s+\w)")


def _explains_the_word_asked(text: str, question: Clause) -> bool:
    """Whether a clause explains a word of the question (_DEFINED): the word holds a term of the question's (退货 holds
    退) or shares one with it."""
    defined = _DEFINED.match(text)
    if defined is None:
        return False
    word = next(group for group in defined.groups() if group)
    lower = word.lower()
    return any(term in lower for term in question.terms) or not clause(word).terms.isdisjoint(question.terms)


def _names(parsed: Clause, question: Clause, text: str) -> frozenset[str]:
    """The names a clause gives that the question does not; in a Chinese clause not an English word in lower case after
    a demonstrative ("这个 case 比较特殊": the matter at hand in the speaker's words, no name; "只包 manufacturing defect"
    names what the warranty covers)."""
    names = parsed.names - question.names
    if names and HAN.search(text):
        return frozenset(name for name in names if re.search(rf"(?:这个|这|那个|此)\s*{re.escape(name)}", text) is None)
    return names


def around_a_refusal(text: str, parsed: Clause, question: Clause, *, in_context: bool) -> bool:
    """Whether a claim is said around a refusal, no claim in an answer that refuses: an apology, a greeting or a
    sign-off, a pointer to a person or a team, the question said back, courtesy, a reason not to answer, or a short
    clause (not one that opens with its subject) or one about the speaker that shares nothing with the question or the
    context (and names nothing the question does not)."""
    text = mandarin(text)
    if (greeting := _GREETING_LEAD.match(text)) and _EN_STATEMENT.match(rest := text[greeting.end():]):
        text = rest  # "Dear customer, we offer free pickup …": what follows the greeting is read
    if _TOPIC_LINE.search(text) or _NOTHING_FOUND_OR_STEPS.search(text) or said_by_the_channel(text):  # whatever numbers
        return True
    if _explains_the_word_asked(text, question) and not numbers_said(parsed):
        return True
    around, quantities = _AROUND.search(text) is not None, numbers_said(parsed)  # a reference's digits: no number
    if quantities or around:
        # a quantity the question gave is no claim of a pointer's ("Our payments team … for a $450 order")
        return not quantities or around and quantities <= question.quantities
    return not (in_context or _names(parsed, question, text)) and (
        parsed.terms.isdisjoint(question.terms)
        or size(parsed) <= _ASIDE_UNITS and _ZH_PREDICATE.search(text) is None and _EN_STATEMENT.match(text) is None
        or SPEAKER.search(text) is not None)
