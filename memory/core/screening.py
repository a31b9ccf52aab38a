"""Screening stored text before it reaches an LLM prompt: the firewall's rule, with no domain in it.

Text that comes from storage (facts, profile fields, notes, stories) is data about the person.
`screen(text)` says whether it reads as something else:

- `instruction`: addressed to the model rather than about the person ("ignore the rules above",
  "you are now ...", "tell her that ...", "system:", role-play and jailbreak phrasing, fake
  prompt tags), in several languages and through the usual disguises (spaced-out or dotted
  letters, look-alike letters from other scripts, digits for letters, invisible characters,
  markup);
- `link`: a URL or an e-mail address;
- `exfiltration`: a request to send, reveal or collect data (the prompt, the notes, a PIN);
- `distressing`: news of a death, an illness or other bad news.

`withheld(text, confirmed_by_staff=...)` is the policy: instruction, link and exfiltration hold
text back always; distressing news only when staff have not confirmed it (they may tell Clara a
sad truth on purpose). `quoted(text)` writes text as one JSON string on one line, so an item can
neither close its quotes nor start a new line or section.

Cheap on the per-turn path: the patterns are compiled once, each runs only on text holding the
words it cannot match without (memory.core.prefilter: first sight of an ordinary text ~50 us of
CPU instead of ~250, same verdicts), and the verdict is cached by text. Text from the
conversation itself (anchors, the last answer) is new every turn, so verdicts are not stored
with the rows: the first sight has to be cheap anyway.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memory.core import crypto
from memory.core.prefilter import Gated, Words, fold

INSTRUCTION = "instruction"
LINK = "link"
EXFILTRATION = "exfiltration"
DISTRESSING = "distressing"

# Why, in words a caregiver reads (the dashboard's review notice).
REASONS = {
    INSTRUCTION: "reads as an instruction to Clara",
    LINK: "contains a link or an e-mail address",
    EXFILTRATION: "asks for information to be revealed or sent somewhere",
    DISTRESSING: "reads as news of a death, an illness or other bad news, not confirmed by staff",
}
# Held back whoever wrote the text.
ALWAYS_WITHHELD = frozenset({INSTRUCTION, LINK, EXFILTRATION})

# Look-alike letters from other scripts, and digits or symbols used for letters.
_LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j",
        "ѕ": "s", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w",
    }
)  # fmt: skip
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "|": "l"})  # fmt: skip
# Letters written one at a time with a separator: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e".
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W\d_][\s.\-_*·•/]{1,3}){3,}[^\W\d_](?![^\W_])")
_SEPARATORS = re.compile(r"[\s.\-_*·•/]")
_GAP = re.compile(r"[\s.\-_*·•/]{2,}")
_NOT_LETTERS = re.compile(r"[\W\d_]+")
_SPACE = re.compile(r"\s+")


def _unspace(match: re.Match[str]) -> str:
    """ "t e l l   h e r" -> "tell her"; a gap holding a dot stays a dot ("w w w . x" -> "www.x")."""
    words = _GAP.split(match.group(0))
    gaps = _GAP.findall(match.group(0))
    out = _SEPARATORS.sub("", words[0])
    for gap, word in zip(gaps, words[1:], strict=True):
        out += "." if gap.strip() == "." else " "
        out += _SEPARATORS.sub("", word)
    return out


def _variants(text: str) -> tuple[str, ...]:
    """The text as written (lower case, accents and invisible characters removed), and
    the same with disguises undone."""
    if text.isascii():
        # ASCII is unchanged by both normalisations and holds no mark or invisible character.
        plain = text.casefold()
    else:
        decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
        plain = "".join(
            ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Me", "Cf")
        ).casefold()
    raw = plain.replace("ß", "ss").replace("\u2019", "'").replace("\u2018", "'")
    plain = _SPACE.sub(" ", raw)
    latin = plain.translate(_LOOKALIKES)
    # Undone before spaces are collapsed: a wider gap is where a word ended.
    unspaced = _SPACE.sub(" ", _SPACED.sub(_unspace, raw.translate(_LOOKALIKES)))
    leet = unspaced.translate(_LEET)
    return tuple(dict.fromkeys((plain, latin, unspaced, leet)))


def _words(*patterns: str) -> Gated:
    """The patterns as one case-insensitive search, each run only on text holding the words it
    needs (memory.core.prefilter)."""
    return Gated(patterns, re.IGNORECASE)


_WHO = r"(?:her|him|them|the (?:person|patient|resident|user|lady|gentleman)|[a-z]+)"
_RULES = (
    r"(?:instructions?|rules?|guidelines?|directions?|directives?|prompts?|polic(?:y|ies)|"
    r"constraints?|restrictions?|guardrails?|programming|system prompt|(?:care|safety) plans?|"
    r"everything (?:above|"
    r"before|else)|(?:all )?(?:of )?(?:the )?above|previous messages?)"
)
_INSTRUCTION = _words(
    # Overriding what the model was told.
    rf"\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|abandon|discard|"
    rf"delete|erase|neglect|set aside|throw out|stop following|do not follow|don'?t follow)\b"
    rf"[^.\n]{{0,40}}?\b{_RULES}",
    rf"\b(?:previous|prior|above|earlier|preceding|original|initial|old|system|hidden)\s+"
    rf"(?:\w+\s+)?{_RULES}\b[^.\n]{{0,30}}\b(?:no longer|do not|don'?t|are void|are cancelled|"
    rf"do not apply|are replaced)",
    r"\bnew\s+(?:instructions?|directives?|system prompt|persona|identity)\b|\bnew (?:rules?|"
    r"role|task|orders?) (?:for you|:)",
    r"\b(?:you are|you're|u r) now\b(?! (?:living|at home|safe|in (?:your|the) (?:home|room)))",
    r"\b(?:from now on|henceforth|starting now),? (?:you|your|clara|the assistant|ignore|always|"
    r"never|only|respond|answer|reply|say|tell|act|speak|forget|refuse|stop|don'?t|do not|be|"
    r"talk|use|call|treat|pretend|keep|pretend)\b",
    r"\bstop following (?:the|your|her|his|their|these|those)\b",
    r"\b(?:ignore|disregard)\b[^.\n]{0,40}\b(?:wrote|written|said|told you|says)\b",
    r"\b(?:rules|instructions|guidelines|restrictions)\b[^.\n]{0,30}\b(?:no longer apply|"
    r"don'?t apply|do not apply|are cancelled|are void|are suspended|are lifted)\b",
    r"\[\s*(?:system|admin|developer|assistant|operator)\b[^\]\n]{0,20}\]",
    r"\bimagine (?:you are|you're|youre|that you|being)\b|\b(?:stay|remain|staying) in character\b",
    r"\bfor this (?:chat|conversation|session) only\b|\beverything you know\b",
    r"\b(?:to|for|dear|hey) (?:the )?(?:ai|a\.i\.|assistant|bot|chatbot|llm|language model)\b|"
    r"\bp\.?s\.? (?:to|for) (?:the )?(?:ai|assistant|bot|model|clara|companion)\b",
    r"\byou are (?:now )?(?:her|his|their) (?:doctor|gp|nurse|husband|wife|son|daughter|mother|"
    r"father|brother|sister|carer|solicitor|bank manager|vicar|priest|lawyer)\b|"
    r"\blet'?s play a game\b",
    r"\bact as (?:if you|though you|an? (?:unrestricted|evil|different|new|uncensored|"
    r"unfiltered)|my\b|dan\b|the (?:system|admin|developer|user)\b)|\b(?:respond|answer|reply|"
    r"speak) as (?:if you|though you|an? (?:unrestricted|evil|different|uncensored|unfiltered|ai)|"
    r"dan\b)",
    r"\bpretend (?:you|to be|that you|youre|you're)\b",
    r"\b(?:behave|act) (?:like|as) an? (?:evil|cruel|rude|mean|nasty|strict|different|"
    r"unrestricted|uncensored|unfiltered)\b|\bfor (?:one|this|the next) conversation\b",
    r"^\W*(?:say|answer|reply|respond|tell (?:her|him|them)|inform (?:her|him|them))\b",
    r"\brole[\s-]?play",
    r"\bplay (?:the )?(?:role|part|character)\b",
    r"\b(?:simulate|impersonate|emulate)\b",
    r"\byour (?:new|real|true|actual) (?:role|task|job|purpose|name|identity|persona|goal|"
    r"instructions?)\b",
    r"\b(?:developer|debug|god|admin|sudo|root|maintenance|unrestricted|unfiltered|jailbreak|"
    r"dan|evil|opposite)\s+mode\b",
    r"\bjail\s?-?break",
    r"\bdo anything now\b",
    r"\b(?:no|zero|without any|without|free of|free from)\s+(?:restrictions|limits|limitations|"
    r"filters|rules|guidelines|censorship|boundaries)\b",
    r"\b(?:no longer|not) bound by\b",
    r"\bprompt injection\b",
    r"\bsystem\s*(?:prompt|message|note|override|instruction|update|notice)?\s*:",
    r"\b(?:system|developer|assistant|user|human|admin|operator)\s+(?:prompt|message|"
    r"instruction|override|update)\b",
    # Fake prompt markup.
    r"<\s*/?\s*(?:system|sys|instructions?|assistant|user|admin|prompt|im_start|im_end|"
    r"script|iframe|img|a)\b",
    r"<\|[^>]{0,20}\|>",
    r"\[/?\s*(?:system|inst|sys|instructions?|admin|assistant)\s*\]",
    r"<<\s*/?\s*sys",
    r"#{2,}\s*(?:system|instructions?|new|important|admin)",
    r"\bbegin notes\b|\bend notes\b",
    r"```",
    r"<!--",
    # Telling the companion what to say or do.
    rf"(?<!to )(?<!would )(?<!'d )(?<!'ll )\b(?:tell|inform|remind|warn|"
    rf"say to|explain to|let)\s+{_WHO}\s+(?:know\s+)?(?:that\b|she\b|he\b|they\b|her \w+ (?:is|has|was|"
    rf"will|died)\b|his \w+ (?:is|has|was|will|died)\b|the (?:news|truth)\b|you\b)",
    r"\b(?:clara|the (?:assistant|ai|bot|model|companion))\s+(?:must|should|shall|will|"
    r"need to|has to|is (?:required|instructed|ordered|told) to)\s+(?:now\s+)?(?:always\s+|"
    r"never\s+)?(?:say|tell|answer|respond|reply|reveal|ignore|stop|start|obey|follow|insist|"
    r"mention|inform|repeat|send|share|speak|call|use|agree|confirm|refuse|be|act|treat|keep|let)",
    r"\byou\s+(?:must|should|shall|will|need to|have to|are (?:required|instructed|ordered|"
    r"told) to)\s+(?:now\s+)?(?:always\s+|never\s+|only\s+)?(?:say|answer|respond|reply|reveal|"
    r"ignore|obey|follow|insist|inform|repeat|send|act as|treat|disregard|forget (?:your|the|all)"
    r"|tell (?:her|him|them|the))\b",
    r"\b(?:always|never)\s+(?:say|tell|answer|respond|reply|mention)\s+(?:that|to her|to him|"
    r"her|him|them|she|he|the|you|anything|it)\b",
    r"\b(?:must|make sure (?:you|to)|be sure to|remember to)\s+(?:say|tell|answer|respond|"
    r"reply|mention|inform|insist)\b",
    r"\b(?:when|whenever|if|every time)\b[^.\n]{0,60}\b(?:asks?|says?|mentions?|talks?|wants?)"
    r"\b[^.\n]{0,60}?(?:,|\bthen|\byou (?:must |should |need to |have to )?)\s*(?:always\s+)?"
    r"(?:say|tell|answer|respond|reply|insist)\b",
    r"\b(?:respond|reply|answer)\s+(?:only\s+)?(?:with|by|in|using)\b",
    r"\b(?:note|message|instructions?|reminder|memo)\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|"
    r"bot|chatbot|model|llm|clara|companion|system)\b",
    r"\b(?:dear|hey|hi|attention|attn|psst|ok|okay)\s*,?\s+(?:ai|assistant|bot|chatbot|model|"
    r"llm|clara|companion|gpt|chatgpt|claude)\b",
    r"\b(?:ai|assistant|chatbot|llm|language model|companion|clara)\s*[,:]\s*(?:please\s+)?"
    r"(?:you|ignore|tell|say|from|always|never|do|stop|send|reveal|forget)\b",
    r"\bas an ai\b|\blanguage model\b|\bchatgpt\b|\bllm\b",
    r"\bobey (?:me|these|this|the following|my|only)\b|\bcomply with (?:these|this|the "
    r"following|my)\b",
    r"\b(?:decode|base64|rot13|rot-13|hex[- ]?encoded)\b",
    r"[a-z0-9+/]{32,}={0,2}",
    r"\bdo not (?:tell|let|inform) (?:the )?(?:staff|carers?|caregivers?|family|nurses?|anyone)\b",
    r"\bkeep (?:this|it) (?:a )?secret from\b|\bdon'?t tell anyone\b",
    # Other languages (written without accents: accents are removed before matching).
    r"\b(?:ignore[rz]?|oublie[rz]?|ne tiens pas compte)\b[^.\n]{0,40}\b(?:instructions?|"
    r"consignes?|regles?|directives)\b",
    r"\b(?:tu es|vous etes) (?:maintenant|desormais)\b|\ba partir de maintenant\b|"
    r"\bdi[st]es?[- ]lui qu|\bdesormais,? (?:dites|vous|tu|repondez|reponds)\b|\bfais semblant\b",
    r"\b(?:ignora|olvida|omite|ignore|olvide)\b[^.\n]{0,40}\b(?:instrucciones|reglas|"
    r"indicaciones|normas|istruzioni|regole|instrucoes|regras)\b",
    r"\bahora eres\b|\ba partir de ahora\b|\bd[ií]gale? que\b|\bfinge que\b|\bhaz como si\b",
    r"\b(?:ignoriere|ignorieren sie|vergiss|vergessen sie|missachte)\b[^.\n]{0,40}\b"
    r"(?:anweisungen|regeln|vorgaben|befehle|instruktionen)\b",
    r"\bdu bist (?:jetzt|ab jetzt|nun)\b|\bab (?:jetzt|sofort),? (?:bist du|antwortest|sagst|"
    r"ignorierst)\b|\bsag(?:e|en sie)? (?:ihr|ihm)"
    r",? dass\b",
    r"\bora sei\b|\bd'ora in poi\b|\bdi(?:lle|gli) che\b|\bfai finta\b",
    r"\bagora (?:voce e|es)\b|\ba partir de agora\b|\bdiga(?:-lhe| a ela| a ele) que\b",
    r"\b(?:negeer|vergeet)\b[^.\n]{0,40}\b(?:instructies|regels)\b|\bje bent nu\b|"
    r"\bvertel (?:haar|hem) dat\b",
    r"\b(?:zignoruj|zapomnij)\b[^.\n]{0,40}\b(?:instrukcje|polecenia|zasady)\b|"
    r"\bpowiedz (?:jej|mu),? ze\b",
    r"\b(?:anwybydda|anghofia)\b",
    r"(?:игнориру|забуд|проигнориру)[^.\n]{0,40}(?:инструкци|правил)|ты теперь|скажи е",
    r"忽略|无视|你现在是|從現在開始|从现在开始|告诉她|以前の指示|指示を無視|無視して|あなたは今",
    r"(?:تجاهل|انس)\s",
    r"\bpuedes ignorar\b|\bignora todo\b",
)
# Disguised phrases, matched with every non-letter removed ("I-g-n-o-r-e ... a.l.l").
_SQUASHED = re.compile(
    r"ignor\w{0,12}(?:previous|prior|above|earlier|all|your|the)\w{0,12}"
    r"(?:instruction|rule|prompt|guideline)|systemprompt|developermode|jailbreak|"
    r"doanythingnow|newinstructions|tellherthat|tellhimthat|wwwdot|www[a-z]{4,}|youarenow(?:a|an|the|dan|free|my)|disregard\w{0,20}"
    r"(?:instruction|rule|guideline)|forget\w{0,12}(?:instruction|rule)"
)
# A role written as a speaker ("Assistant:", "[admin note]:"), part of _INSTRUCTION. Kept apart
# because it is the costliest of its patterns (its optional prefixes are tried at every
# position) and can only match text with a colon: screen() runs it only then. Same verdicts.
_ROLE_COLON = _words(
    r"(?:^|[\n\[(<{>|#*\"'-]|[.!?]\s)\s*(?:developer|assistant|admin|administrator|operator|"
    r"root|user|human|ai|model)\s*(?:prompt|message|note|override|instruction|update|notice)?"
    r"\s*:",
)

_LINK = _words(
    r"\b(?:https?|ftp|file|data|javascript|mailto|tel|sms|ws|wss)\s*:",
    r"\bwww\s*\.",
    r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|co|uk|ly|me|info|biz|ru|"
    r"cn|xyz|top|app|dev|ai|gg|tk|link|site|online|click|to|sh|tv|us|de|fr|es|it|nl|pl|in|au|"
    r"ca|eu|ws|cc|gl|page|onion|zip|mov)\b(?!\.[a-z])",
    r"\b[a-z0-9-]+(?:\s*\.\s*[a-z0-9-]+)*\s+\.\s*(?:com|net|org|io|ru|xyz|info|biz|onion)\b",
    r"\b[\w.+-]+\s*(?:@|\(at\)|\[at\]|\{at\}| at )\s*[\w-]+\s*(?:\.|\(dot\)|\[dot\]| dot )\s*"
    r"[a-z]{2,}\b",
    r"\]\s*\(",
    r"\b(?:bit\.ly|tinyurl|t\.co|goo\.gl|ngrok|pastebin|webhook)\b",
    r"\b(?:dot|punkt|point)\s+(?:com|net|org|co\s+dot\s+uk)\b",
)
_EXFILTRATION = _words(
    r"\b(?:send|e-?mail|mail|forward|post|upload|transmit|leak|share|text|message|fax|"
    r"whatsapp|sms|dm|submit|report|copy|export|sync|relay|pass)\b[^.\n]{0,60}\b(?:to|at|"
    r"via|onto|into)\s+(?:this|that|the following|my|our|an?|the)?\s*(?:address|e-?mail|"
    r"number|phone|server|site|website|url|link|endpoint|account|inbox|contact|webhook|"
    r"person|stranger|me|us)\b",
    r"\b(?:send|e-?mail|mail|forward|post|upload|transmit|leak|text|fax|whatsapp|submit|"
    r"export|relay)\b[^.\n]{0,30}\b(?:pin|pins|password|passwords|passcode|bank|card|account|"
    r"notes|details|data|records|memories|facts|address|addresses|phone numbers?|medication|"
    r"conversations?|messages|transcripts?|prompt|instructions)\b",
    r"\b(?:send|e-?mail|forward|post|upload|transmit)\b[^.\n]{0,60}\bto\s+\S+@",
    r"\b(?:reveal|disclose|repeat|print|output|dump|show|list|give|tell|share|leak|recite|"
    r"spell out|write out|read out|read back|paste)\b[^.\n]{0,40}\b(?:system prompt|"
    r"(?:all|every|each|any) (?:the )?(?:fact|memory|note|record|message|conversation|detail)s?|"
    r"(?:your|the|hidden|original|secret) (?:prompt|instructions|rules|notes|context|"
    r"configuration)|api[ -]?keys?|passwords?|passcodes?|pin(?: number| code)?s?|"
    r"bank (?:details|account)|card (?:number|details)|account (?:number|details)|"
    r"sort code|security (?:code|number|question)|national insurance|social security|"
    r"credentials|tokens?|secrets?|(?:all|every|other) (?:the )?(?:facts|memories|notes|"
    r"data|details|residents?|patients?|people|records|conversations|messages))\b",
    r"\b(?:ask|get|collect|find out|obtain|request|extract|gather)\b[^.\n]{0,30}\b(?:her|his|"
    r"their|the)\s+(?:bank|card|pin|password|passcode|account|security|national insurance|"
    r"social security|credit|debit|login|address and|date of birth and|mother'?s maiden)",
    r"\b(?:what is|what'?s)\s+(?:her|his|their)\s+(?:pin|password|bank|card number)\b",
    r"\b(?:card|bank|account) (?:details|number)s?\b|\bsort code\b|\bpin (?:number|code)\b|"
    r"\bpasswords?\b|\bpasscodes?\b",
    r"\b(?:transfer|wire|send|give|pay)\b[^.\n]{0,30}(?:\b(?:money|funds|pounds|dollars|"
    r"euros|gift cards?|bitcoin|crypto)\b|[£$€]\s?\d)",
    r"\b(?:her|his|their) pins?\b|\b(?:digits|numbers?) (?:of|on) (?:her|his|their) "
    r"(?:card|account)\b|\bwhich bank\b",
    r"\b(?:call|ring|phone|text|contact|dial)\b[^.\n]{0,30}(?:\+?\d[\d\s-]{7,}\d)",
)
_DISTRESSING = _words(
    r"\b(?:died|dead(?!-?head| sea| end)|dies|dying|death|deceased|perished|passed away|passed on|passed over|"
    r"pass away|has passed|is gone forever|no longer with us|not with us anymore|"
    r"lost (?:her|his|their) (?:life|battle|fight)|killed|murdered|drowned|suicide|"
    r"took (?:her|his|their) own life|funeral|(?:was|were|been|is|are|be) buried|cremat\w*|obituary|widow(?:ed|er)?|"
    r"late (?:husband|wife|son|daughter|mother|father|brother|sister|partner|friend))\b"
    r"(?!-?head| sea| end)",
    r"\b(?:cancer|tumou?r|terminal(?:ly)?|leuk(?:a)?emia|hospice|palliative|end of life|"
    r"end-of-life|weeks to live|months to live|days to live|incurable|metasta\w*|"
    r"chemo\w*|heart attack|(?:had|has had|suffered|after) (?:a|another) (?:\w+ )?stroke|aneurysm|seriously ill|critically ill|very ill|"
    r"gravely ill|on life support|in intensive care|in a coma|coma)\b",
    r"\b(?:is|was|has been|got)\s+(?:rushed |admitted |taken )?(?:to|into|in)\s+"
    r"(?:the\s+)?(?:hospital|a&e|icu|intensive care)\b",
    r"\b(?:is|was|has been|got|became|been)\s+(?:very |really |so |terribly )?(?:ill|sick(?! of)|"
    r"poorly|diagnosed)\b",
    r"\b(?:diagnos\w+ with|has (?:got )?(?:alzheimer'?s|dementia|parkinson'?s|als|mnd|"
    r"covid|sepsis|pneumonia))\b",
    r"\b(?:getting worse|worsening|deteriorat\w*|declining fast|won'?t (?:get better|recover)"
    r"|will not (?:get better|recover)|never (?:get better|recover|come back|coming back|"
    r"see (?:her|him|them|you) again)|is never coming|isn'?t coming back|not coming back)\b",
    r"\b(?:divorc\w*|left (?:her|him|them) for|abandoned|disowned|doesn'?t love|does not "
    r"love|don'?t love|do not love|nobody (?:loves|wants|cares|visits)|no one (?:loves|wants|"
    r"cares|visits)|hates (?:her|him|them)|ashamed of (?:her|him|them)|"
    r"(?:is|are) (?:a )?burden)\b",
    r"\b(?:bankrupt\w*|lost (?:all )?(?:her|his|their) (?:money|savings|home|house|job)|"
    r"(?:house|home|flat|cottage|bungalow|farm|school|church)\b[^.\n]{0,30}\b(?:was|were|has been|"
    r"is being|will be|got) (?:sold|repossessed|demolished|knocked down|pulled down|"
    r"burn(?:ed|t) down|flooded|destroyed)|evicted|repossess\w*|robbed|burgled|"
    r"was stolen|has been stolen|arrested|in prison|in jail|jailed|convicted|"
    r"(?:sent|gone|went) to (?:prison|jail)|"
    r"(?:was|got|been|is being) (?:fired|sacked)|"
    r"made redundant|lost (?:her|his|their) job)\b",
    r"\b(?:put down|put to sleep|run over|hit by a car|ran away and)\b",
    r"\bburn(?:ed|t) down\b|\bsold (?:last|this|in|on|yesterday|recently)\b|"
    r"\b(?:will|can)(?:not| not|'t) (?:ever )?go (?:back|home)\b|\bwon'?t (?:ever )?go (?:back|home)\b|"
    r"\bnever go(?:ing)? (?:back|home)\b",
    r"\b(?:(?:car|road|bad|terrible|serious|fatal|awful) accident|in an accident|had an accident|"
    r"(?:car|plane|bus|train) crash|crashed|miscarriage|stillborn|assaulted|attacked|injured|"
    r"wounded|(?:gone|went|reported|been) missing|kidnapped)\b",
    r"\b(?:bad|terrible|sad|awful|tragic|devastating|shocking) news\b|\btragedy\b|"
    r"\bgoing into (?:a )?(?:care|nursing) home\b|\b(?:will|is going to) (?:die|be moved|"
    r"lose)\b",
    # Other languages.
    r"\b(?:est mort|est morte|est decede|est decedee|deces|a succombe|cancer|enterrement|"
    r"funerailles|a l'hopital)\b",
    r"\b(?:murio|ha muerto|esta muert[oa]|fallecio|ha fallecido|falleci\w+|funeral|entierro|"
    r"en el hospital)\b",
    r"\b(?:ist gestorben|ist tot|verstorben|gestorben|beerdigung|krebs|im krankenhaus)\b",
    r"\b(?:e morto|e morta|e deceduto|e deceduta|morto|morta|funerale|tumore|in ospedale)\b",
    r"\b(?:morreu|faleceu|esta mort[oa]|no hospital)\b",
    r"\b(?:is overleden|overleden|is dood|begrafenis|kanker|in het ziekenhuis)\b",
    r"\b(?:umarl|umarla|nie zyje|pogrzeb|rak|w szpitalu)\b",
    r"умер|умерла|погиб|скончал|похорон|рак",
    r"去世|死了|过世|癌症|亡くな|死んだ",
)

# What the patterns need, looked for once a variant (memory.core.prefilter).
_WORDS = Words(_INSTRUCTION, _ROLE_COLON, _LINK, _EXFILTRATION, _DISTRESSING)


@dataclass(frozen=True)
class Screening:
    """What a text reads as: the kinds found (empty: plain data about the person)."""

    flags: frozenset[str] = frozenset()

    def withheld(self, *, confirmed_by_staff: bool) -> tuple[str, ...]:
        """The reasons to hold the text back from a prompt, in a fixed order (empty: it may
        go in). Staff confirmation lets distressing news through, never the rest."""
        shown = [kind for kind in (INSTRUCTION, LINK, EXFILTRATION) if kind in self.flags]
        if DISTRESSING in self.flags and not confirmed_by_staff:
            shown.append(DISTRESSING)
        return tuple(shown)


def _flags(text: str, *, filtered: bool = True) -> frozenset[str]:
    """The kinds `text` reads as. `filtered=False` runs every pattern on every variant (the
    reference the prefilter is tested against: same answer, about 20 times the cost)."""
    flags: set[str] = set()
    variants = _variants(text or "")
    for variant in variants:
        present = _WORDS.present(fold(variant)) if filtered else None
        if _INSTRUCTION.search(variant, present) or (
            ":" in variant and _ROLE_COLON.search(variant, present)
        ):
            flags.add(INSTRUCTION)
        if _LINK.search(variant, present):
            flags.add(LINK)
        if _EXFILTRATION.search(variant, present):
            flags.add(EXFILTRATION)
        if _DISTRESSING.search(variant, present):
            flags.add(DISTRESSING)
    squashed = _NOT_LETTERS.sub("", variants[-1])
    if _SQUASHED.search(squashed):
        flags.add(INSTRUCTION)
    return frozenset(flags)


@lru_cache(maxsize=16384)
def screen(text: str) -> Screening:
    """What `text` reads as. Pure and cached by text."""
    return Screening(_flags(text))


# --- Staff approvals: held-back text staff let through, as quoted data ----------------------------

APPROVAL_PURPOSE = "firewall-approval"


def approval_digest(person_id, text: str) -> str:
    """The keyed digest of `text` approved for one person (it reveals neither); whitespace
    as the prompt quotes it. Another text, even one character changed, has another digest."""
    return _short(crypto.keyed_digest(_approval_value(person_id, text), purpose=APPROVAL_PURPOSE))


def _approval_value(person_id, text: str) -> str:
    return f"{person_id}\x00{' '.join(text.split())}"


def _short(digest: str) -> str:
    """`<key id>:` and 128 bits of the HMAC: fits an audit row's object id."""
    kid, mac = digest.split(":", 1)
    return f"{kid}:{mac[:32]}"


@dataclass(frozen=True)
class Approvals:
    """The texts staff approved for one person (Person.approved_texts), by keyed digest."""

    person_id: object = None
    digests: frozenset[str] = frozenset()

    @classmethod
    def of(cls, person_id, stored: str | None) -> Approvals:
        return cls(person_id, frozenset((stored or "").split()))

    def covers(self, text: str) -> bool:
        """Whether staff approved `text` as it is now. Costs a few HMACs, and is asked only of
        text the screen holds back."""
        if not self.digests or self.person_id is None:
            return False
        value = _approval_value(self.person_id, text)
        keys = crypto.keyring().keyed_digest_variants(value, purpose=APPROVAL_PURPOSE)
        return not self.digests.isdisjoint(_short(key) for key in keys)


NO_APPROVALS = Approvals()


@lru_cache(maxsize=32768)
def withheld(text: str, *, confirmed_by_staff: bool) -> tuple[str, ...]:
    """Why `text` may not enter a prompt (empty: it may, as quoted data). Cached too: a turn
    asks it of every story and theme it may offer (~170 times at 1M messages)."""
    return screen(text).withheld(confirmed_by_staff=confirmed_by_staff)


def reasons_in_words(reasons: tuple[str, ...]) -> list[str]:
    return [REASONS[reason] for reason in reasons]


# Characters that can end a line or change how text reads without being seen: escaped too.
_UNSEEN = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs"}


def quoted(text: str) -> str:
    """`text` as one JSON string on one line: its quotes, backslashes, line breaks and invisible
    characters escaped, so it cannot close its quotes or start a new line or section."""
    body = json.dumps(" ".join(text.split()), ensure_ascii=False)
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in _UNSEEN and ch != '"' else ch
        for ch in body
    )
