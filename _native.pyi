"""The types of ragpulse._native, the compiled core (native/: each area's bindings in native/src/<area>/bindings.rs,
registered in native/src/lib.rs). tests/test_native_stub.py holds this stub and the built module to the same names,
methods, properties and arities. PyO3 extracts exactly the Python types named here: a frozenset where it says
frozenset (not a set), a dict where it says dict (not any mapping)."""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Self, TypeAlias, TypedDict, TypeVar, final

# In the order native/src/lib.rs registers them.
__all__ = [
    "decode_otlp_traces", "decode_otlp_json", "stem_words", "regex_spans", "cjk_covered", "sentences", "clauses",
    "topics_shared", "count_inline", "parse_citations", "scan_citations", "draw", "normalised", "named_things",
    "turn_kind", "run_stages", "fallback_fields", "CITATION_MAX_MARKERS", "CITATION_MAX_RANGE", "ChunkAnalysis",
    "ChunkContext", "CitationCore", "LexicalAnalyser", "LexicalCore", "LexicalUnits", "DedupCore", "ProbeCore",
    "ExporterCore", "ExportSeries", "FastCounter", "FastHistogram", "JoinCore", "KeptTexts", "TraceLines", "TextTable",
    "KeyFilter", "RoleRules", "TextCache", "ReorderHold", "RoutineFloor", "Substrings", "WordGate", "WordGates",
    "PolicyCore", "SamplerCore", "SessionTable", "SessionView", "TextAnalyser", "StemMemo", "TraceTable", "Turn",
    "VerdictRules",
]

# An OTLP AnyValue as the decoders give it: kvlists as dicts, arrays as lists, an empty value as None.
_AnyValue: TypeAlias = str | bool | int | float | bytes | list[_AnyValue] | dict[str, _AnyValue] | None
_Attributes: TypeAlias = dict[str, _AnyValue]
_Span = TypeVar("_Span")
_Event = TypeVar("_Event")
_Envelope = TypeVar("_Envelope")
# span_type(trace_id, span_id, parent_span_id, name, start_unix_nano, end_unix_nano, attributes, resource, events,
# size, scope, kind[, roles]), and status_code=, status_message= when the span has a status: ids in hex, the parent
# None unless it has 8 non-zero bytes; roles (an int, -1 for none decided) when the key filter has RoleRules.
_SpanType: TypeAlias = Callable[..., _Span]
# event_type(name, time_unix_nano, attributes)
_EventType: TypeAlias = Callable[[str, int, _Attributes], _Event]
# The spans made, and (name, reason, what is wrong) of each span not made: the reason "invalid_trace_id",
# "invalid_span_id" or "invalid_utf8" (a string in the span, its resource or its scope), a plain str there, as the
# callers' lists hold it (a list of Literal would not pass for one).
_Decoded: TypeAlias = tuple[list[_Span], list[tuple[str, str, str]]]
# A quantity: (dimension, value), e.g. ("days", 30.0).
_Quantity: TypeAlias = tuple[str, float]

# OTLP decoding (native/src/otlp/bindings.rs)

@final
class KeyFilter:
    def __new__(cls, exact: set[str] | frozenset[str], prefixes: Sequence[str], documents: Sequence[str] | None = None,
                roles: RoleRules | None = None, chunk: type | None = None) -> Self: ...
    def keeps(self, key: str) -> bool: ...

@final
class RoleRules:  # native/src/otlp/roles.rs: sources/otlp/role_rules.py's tables
    def __new__(cls, keys: tuple[str, str, str], kinds: Mapping[str, int], operations: Mapping[str, int],
                calls: Mapping[str, int], events: Mapping[str, int], undecided: set[str]) -> Self: ...
    def of(self, name: str, attributes: Sequence[tuple[str, str | None]], events: Sequence[str]) -> int: ...

@final
class TextCache:  # native/src/otlp/texts.rs: retrieved documents' texts of 64 bytes or more, across requests
    def __new__(cls, max_entries: int, max_bytes: int, evicted: FastCounter) -> Self: ...
    def __len__(self) -> int: ...
    @property
    def bytes(self) -> int: ...

def decode_otlp_traces(
    body: bytes, keys: KeyFilter | None, span_type: _SpanType[_Event, _Span], event_type: _EventType[_Event],
    texts: TextCache | None = None,
) -> _Decoded[_Span]: ...
def decode_otlp_json(
    body: bytes, keys: KeyFilter | None, span_type: _SpanType[_Event, _Span], event_type: _EventType[_Event],
    texts: TextCache | None = None,
) -> _Decoded[_Span] | None: ...

# The lexical scorer (native/src/lexical/bindings.rs)

@final
class LexicalUnits:
    @property
    def words(self) -> frozenset[str]: ...
    @property
    def numbers(self) -> frozenset[tuple[str, str]]: ...  # (value, unit), unit "" when none
    @property
    def values(self) -> frozenset[str]: ...
    def __sizeof__(self) -> int: ...

# The citations stage (native/src/citations/stage.rs; scorers/citations.py wires it): structured is its
# event_citations, series(raw label values) its label set's counters (_Series).
@final
class CitationCore:
    def __new__(cls, trace_type: type, labels: Sequence[str], max_cached: int, *,
                structured: Callable[[_Event], object | None],
                series: Callable[[tuple[str | None, ...]], object]) -> Self: ...
    def process(self, envelope: _Envelope) -> _Envelope: ...  # the stage

@final
class LexicalAnalyser:
    def __new__(
        cls,
        units: Sequence[tuple[str, str]],
        number_words: dict[str, str],
        stopwords: set[str] | frozenset[str],
        cjk_digits: dict[str, int],
        cjk_units: Sequence[str],
        cjk_simplified: dict[str, str],
    ) -> Self: ...
    def units(self, text: str) -> LexicalUnits: ...
    def words_only(self, part: str) -> str | None: ...
    # (groundedness, answer relevancy, context relevance, number mismatch)
    def score(
        self, answer: str, question: LexicalUnits, chunks: Sequence[LexicalUnits]
    ) -> tuple[float | None, float | None, float | None, bool]: ...

# scorers/text_cache.py's TextCache with its table in the crate (native/src/made.rs): make(text) once a text while
# it stays, size(text, value) its bytes, asked once; least recently used out first past max_entries or max_bytes, each
# eviction counted in `evicted`; on_repeat: a text is kept only when it comes again. Subclassed by CompiledTextCache.
class TextTable:
    def __new__(cls, make: Callable[[str], object], size: Callable[[str, object], int], *, max_entries: int,
                max_bytes: int, evicted: FastCounter, on_repeat: bool = False) -> Self: ...
    def get(self, text: str) -> object: ...
    def __len__(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def items(self) -> list[str]: ...  # the texts held, least recently used first

# The lexical scorer's stage (native/src/lexical/stage.rs; scorers/lexical.py wires it): chunks and questions are its
# caches' tables (CompiledTextCache, scorers/text_cache.py), scores_type its LexicalScores, children(raw label values) its label set's
# (groundedness, answer relevancy, context relevance) histograms and number-mismatch counter.
@final
class LexicalCore:
    def __new__(cls, analyser: LexicalAnalyser, trace_type: type, scores_type: type, max_chars: int, chunks: TextTable,
                questions: TextTable, labels: Sequence[str], max_children: int, *,
                children: Callable[[tuple[str | None, ...]], tuple[FastHistogram, FastHistogram, FastHistogram,
                                                                   FastCounter]]) -> Self: ...
    def score(self, event: _Event, answer_text: str | None = None) -> object | None: ...
    def process(self, envelope: _Envelope) -> _Envelope: ...  # the stage

# The local judge's text analysis (native/src/clause/bindings.rs)

class _TextTables(TypedDict):
    stopwords: set[str] | frozenset[str]
    chatter: set[str] | frozenset[str]
    cjk_function: set[str] | frozenset[str]  # single characters
    cjk_negators: set[str] | frozenset[str]  # single characters
    not_negations: Sequence[str]
    en_negators: set[str] | frozenset[str]
    quantity_words: set[str] | frozenset[str]
    quantity_words_first: set[str] | frozenset[str]
    en_units: dict[str, _Quantity]
    currency_sign: dict[str, str]
    number_words: dict[str, float]
    scales: dict[str, float]
    minutes: dict[str, float]
    rate_minutes: dict[str, float]
    half: dict[str, float]
    cjk_units: dict[str, _Quantity]
    cjk_digits: dict[str, int]
    not_counts: set[str] | frozenset[str]
    scope_ends: set[str] | frozenset[str]
    scope: int
    question_stopwords: set[str] | frozenset[str]
    cjk_simplified: dict[str, str]  # a CJK character -> its Simplified form (scorers/cjk_simplified.py)

# scorers/text.py's Clause after its text: (terms, words, cjk_parts, chars, sequence, quantities, names, negated,
# governed, spelled)
_Analysis: TypeAlias = tuple[frozenset[str], frozenset[str], tuple[str, ...], frozenset[str], tuple[str, ...],
                             frozenset[_Quantity], frozenset[str], bool, frozenset[str], frozenset[_Quantity]]

@final
class TextAnalyser:
    def __new__(cls, patterns: dict[str, str], tables: _TextTables) -> Self: ...
    def words(self, lower: str) -> list[str]: ...
    def question_terms(self, text: str) -> frozenset[str]: ...
    # len(question & question_terms(text)), no set made
    def question_shared(self, question: frozenset[str], text: str, memo: StemMemo | None = None) -> int: ...
    # a chunk's analysis: its sentences as their clauses' texts, its question terms from text
    def chunk(self, sentences: Sequence[Sequence[str]], text: str) -> ChunkAnalysis: ...
    def clause(self, text: str) -> _Analysis: ...

def cjk_covered(parts: tuple[str, ...], found: frozenset[str], chars: frozenset[str]) -> float: ...
def stem_words(words: Sequence[str]) -> list[str]: ...
def sentences(text: str) -> list[str]: ...
def clauses(text: str) -> list[str]: ...
def regex_spans(pattern: str, texts: Sequence[str]) -> list[list[tuple[int, int]]]: ...  # (start, end) in characters

# The local judge's chunks (native/src/chunk/bindings.rs)

# how many of the question's terms are each chunk's question terms
def topics_shared(chunks: list[ChunkAnalysis], question: frozenset[str]) -> list[int]: ...

# Inline citations (native/src/citations/bindings.rs): scorers/citations.py makes its records of these tuples.
# A marker as written, and the index of the chunk it names (None: dangling).
_Marker: TypeAlias = tuple[str, int | None]

# (text without markers, cited sentences, uncited, resolved, dangling, over_cap); None: it cites nothing
def count_inline(answer: str, chunk_ids: Sequence[str | None]) -> tuple[str, int, int, int, int, bool] | None: ...
# ([(sentence, chunk indices, dangling markers)], uncited, resolved, dangling, over_cap); None: it cites nothing
def parse_citations(
    answer: str, chunk_ids: Sequence[str | None]
) -> tuple[list[tuple[str, tuple[int, ...], tuple[str, ...]]], int, int, int, bool] | None: ...
# (text without definition lines and markers read, [(position, markers)], length read, over_cap), in characters
def scan_citations(
    answer: str, chunk_ids: Sequence[str | None]
) -> tuple[str, list[tuple[int, list[_Marker]]], int, bool]: ...
def draw(trace_id: str, name: str) -> float: ...  # collector/sampling.py; native/src/draw.rs

CITATION_MAX_MARKERS: int  # markers read per answer
CITATION_MAX_RANGE: int  # "[1-3]" is three markers; a range this wide is no citation

@final
class ChunkAnalysis:  # made by TextAnalyser.chunk
    def __len__(self) -> int: ...
    def __sizeof__(self) -> int: ...

# scorers/text.py's Clause fields: text, terms, words, cjk_parts, chars, sequence, quantities, names, negated,
# governed, spelled
_ClauseFields: TypeAlias = tuple[str, frozenset[str], frozenset[str], tuple[str, ...], frozenset[str], tuple[str, ...],
                                 frozenset[_Quantity], frozenset[str], bool, frozenset[str], frozenset[_Quantity]]

@final
class ChunkContext:
    def __new__(cls, chunks: Sequence[ChunkAnalysis]) -> Self: ...
    def __len__(self) -> int: ...
    def sentences(self) -> list[int]: ...
    def clause(self, position: int) -> _ClauseFields: ...
    # (Dice of the best clause, its position, the positions within margin of it), or None when no clause shares a key
    # what the chunks and the claim's best aligned clause support, and the alignment: None (no key shared) or (Dice,
    # best position, those within margin, its text, claim terms it lacks, its terms the claim lacks)
    def evidence(self, terms: frozenset[str], quantities: frozenset[_Quantity], words: frozenset[str],
                 parts: tuple[str, ...], margin: float
                 ) -> tuple[float, float, tuple[float, int, list[int], str, int, int] | None]: ...
    def negated(self, position: int) -> bool: ...
    def holding(self, term: str) -> list[int]: ...
    def has_term(self, term: str) -> bool: ...
    def has_name(self, name: str) -> bool: ...
    def has_term_starting(self, root: str) -> bool: ...
    # the terms the clause at position lacks that the chunks say only negated
    def only_negated(self, terms: frozenset[str], position: int) -> list[str]: ...
    # those of a claim's quantities a clause has (spelled: among its bare counts in words)
    def held(self, quantities: frozenset[_Quantity], spelled: bool = False) -> frozenset[_Quantity]: ...

# The local judge's verdict rules that read the chunks (native/src/verdict.rs)

@final
class StemMemo:  # native/src/clause/memo.rs: English words' stems, the oldest let go first past either cap
    def __new__(cls, max_entries: int, max_bytes: int, evicted: FastCounter) -> Self: ...
    def __len__(self) -> int: ...
    @property
    def bytes(self) -> int: ...

@final
class VerdictRules:
    def __new__(cls, demonym_endings: Sequence[str], aligned_at_least: float, too_short_units: int,
                analyser: TextAnalyser, swap_aligned_at_least: float, swap_max_terms: int) -> Self: ...
    # Each text's claim, in order. None: no claim; else (units, terms, has a quantity, CJK characters, has a number in
    # digits or words, what the rules found: ChunkContext.evidence's three, the quantities the context lacks, the
    # contradiction before the swap (rule, quantity, its rivals, the negating clause's text) or None, the names the
    # context lacks (a short claim's capitalised words' stems too); TextAnalyser.clause's fields when `declining` and it
    # has no quantity, and when the swap rule reads it (no contradiction, swap_aligned_at_least and swap_max_terms
    # met), else None); its words' stems from `memo`
    def claims(self, context: ChunkContext, texts: list[str], margin: float, declining: bool,
               memo: StemMemo | None = None
               ) -> list[tuple[int, int, bool, int, bool,
                               tuple[float, float, tuple[float, int, list[int], str, int, int] | None, list[_Quantity],
                                     tuple[str, _Quantity | None, list[_Quantity], str | None] | None, list[str]],
                               _Analysis | None] | None]: ...

# The fast path's metric children (native/src/metrics.rs)

# The feedback join's reorder hold (native/src/reorder/bindings.rs): entries go back through on_turn(*args) or
# on_feedback(*args).

@final
class ReorderHold:
    def __new__(cls, seconds: float, max_entries: int, max_bytes: int, on_turn: Callable[..., None],
                on_feedback: Callable[..., None], reordered: FastCounter, late: FastCounter, full: FastCounter) -> Self: ...
    def holds(self, session_id: str) -> bool: ...
    def turn(self, session_id: str, timestamp: float | None, partition: int, chars: int, now: float,
             args: tuple[object, ...]) -> None: ...
    def late(self) -> None: ...
    def feedback(self, session_id: str, partition: int, chars: int, now: float, args: tuple[object, ...]) -> None: ...
    def expire(self, now: float) -> None: ...
    def flush(self, partitions: set[int] | frozenset[int]) -> None: ...
    @property
    def entries(self) -> int: ...
    @property
    def bytes(self) -> int: ...

# The feedback join's answers and its trace table (native/src/traces/bindings.rs; feedback/tables.py says what each
# attribute of a Turn holds).

@final
class Turn:
    trace_id: str
    at: float
    labels: tuple[str | None, ...]
    fallback: bool
    size: int
    signals: tuple[str, ...]
    judgment: tuple[str, str, str] | None
    payload: tuple[bytes, tuple[str | None, ...]] | None  # feedback/kept.py's Kept
    payload_size: int
    kept: bool
    evidence: bool
    sampled_by: tuple[str, ...]
    raised: tuple[str, ...]
    open: bool
    kind: str | None
    partition: int

# feedback/kept.py's KeptEvents (native/src/kept.rs): pack(event) -> ((its msgpack without attributes and chunks' texts,
# the texts as the store holds them), the bytes msgpack makes of it with its texts); encode_into is msgspec's msgpack
# Encoder.encode_into (the event into a buffer the store reuses).
@final
class KeptTexts:
    # trace_type's chunks and attributes and chunk_type's text are read at their slots (native/src/fields.rs)
    def __new__(cls, max_texts: int, max_bytes: int, entry_bytes: int, evicted: FastCounter,
                encode_into: Callable[[object, bytearray], None], trace_type: type, chunk_type: type) -> Self: ...
    def pack(self, event: _Event) -> tuple[tuple[bytes, tuple[str | None, ...]], int]: ...
    def __len__(self) -> int: ...
    @property
    def bytes(self) -> int: ...

@final
class TraceLines:
    # limits: max_event_bytes, max_query_chars, max_answer_chars, max_attributes, max_chunks, max_chunk_chars;
    # trace_type's and chunk_type's fields are read at their slots (TypeError: one is no settable object slot)
    def __new__(cls, trace_type: type, chunk_type: type, envelope_type: Callable[..., _Envelope], source: str,
                item_errors: tuple[type[BaseException], ...], limits: tuple[int, int, int, int, int, int]) -> Self: ...
    def decode(self, decode: Callable[[memoryview], _Event], body: bytes, received_at: float, envelopes: list[_Envelope],
               other: Callable[[int, memoryview, _Event], None], reject: Callable[[int, Exception], None]) -> None: ...

@final
class TraceTable:
    def __new__(cls, max_traces: int, max_bytes: int, entry_bytes: int, evicted: FastCounter) -> Self: ...
    def add(self, trace_id: str, at: float, labels: tuple[str | None, ...], fallback: bool, partition: int) -> Turn: ...
    def get(self, trace_id: str) -> Turn | None: ...
    def __getitem__(self, key: str, /) -> Turn: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...  # oldest first
    def buried(self, trace_id: str) -> bool: ...
    def expire(self, now: float, window: float) -> None: ...
    def revoke(self, partitions: set[int] | frozenset[int]) -> int: ...
    def keep(self, turn: Turn, payload: object, size: int, sampled_by: tuple[str, ...]) -> None: ...
    # The judge sampler's keep: the event as pack keeps it (the kept form and its bytes); None when its trace left.
    def keep_event(self, event: _Event, sampled_by: tuple[str, ...],
                   pack: Callable[[_Event], tuple[object, int]]) -> Turn | None: ...
    def passed(self, trace_id: str) -> None: ...
    def take(self, turn: Turn) -> tuple[object, int] | None: ...
    @property
    def bytes(self) -> int: ...
    @property
    def tombstones(self) -> int: ...

# The judge sampler's stage (native/src/sampler.rs; judging/sampler.py wires it). class_rates and classes: of always,
# scorer_flag and over_refusal, in that order; raised: a prometheus_client Counter.

@final
class WordGate:  # scorers/declines.py, scorers/handoffs.py, scorers/nothing_new.py; native/src/gate.rs
    def __new__(cls, words: Sequence[str], parts: str) -> Self: ...
    # whether a word of an ASCII text (a run between `parts`), lower-cased, is one of the words (one with a space: two
    # words in a row); None: not ASCII
    def meets_in(self, text: str) -> bool | None: ...

@final
class WordGates:  # scorers/refusal_gate.py; native/src/gate.rs
    # groups: (words, the ASCII characters that part them), at most 64, a word with a space two words in a row;
    # needs: for each, the bits of the groups met before it that it is read after (0 or None: always)
    def __new__(cls, groups: Sequence[tuple[Sequence[str], str]], needs: Sequence[int] | None = None) -> Self: ...
    # a bit for each group (1 << its index) one of whose words is a word of the text, lower-cased (ASCII only); a
    # character beyond ASCII parts words
    def met_in(self, text: str) -> int: ...

@final
class Substrings:  # scorers/small_models.py; native/src/gate.rs
    def __new__(cls, strings: Sequence[str]) -> Self: ...
    # whether the text, lower-cased, holds one of the strings anywhere (not as words); None: not ASCII
    def in_lowered(self, text: str) -> bool | None: ...

@final
class RoutineFloor:  # judging/routine_floor.py; native/src/floor.rs
    scale: float
    def __new__(cls, per_minute: int, clock: Callable[[], float], max_apps: int, *, scale: float = 1.0) -> Self: ...
    def set_partition_share(self, owned: int, total: int) -> None: ...
    def rate(self, app: str | None, base_rate: float) -> float: ...

@final
class PolicyCore:  # judging/sampler.py's SamplingPolicy; native/src/policy.rs
    def __new__(cls, base_rate: float, overrides: dict[tuple[str | None, str | None], float],
                always: Sequence[Callable[[_Event], bool]], flag_support_below: float,
                over_refusal_context_at_least: float) -> Self: ...
    def base_rate_of(self, event: _Event) -> float: ...
    def stratum(self, envelope: _Envelope) -> str: ...

@final
class SamplerCore:
    # the envelope's, trace's and chunk's fields the stage reads are read at their slots (native/src/fields.rs)
    def __new__(cls, trace_type: type, chunk_type: type, envelope_type: type, floor: RoutineFloor, policy: PolicyCore,
                traces: TraceTable, class_rates: Sequence[float | None], labels: Sequence[str], routine: FastCounter,
                classes: Sequence[FastCounter], raised: object, max_offered: int, *,
                judgeable: Callable[[_Event], _Event | None], offered: Callable[[_Event, bool, str], FastCounter],
                offer: Callable[[_Event, bool, str, str, str, tuple[str, ...], int], bool],
                pack: Callable[[_Event], tuple[object, int]], passed: Callable[[str], None],
                negative: Callable[[str, Turn], None]) -> Self: ...
    def sample(self, envelope: _Envelope) -> _Envelope: ...  # the stage

# The feedback join's stage (native/src/join.rs; feedback/join.py wires it): pending is the join's table of waiting
# feedback by trace id (an OrderedDict), answered_labels the signal counter's set of raw label sets admitted.

@final
class JoinCore:
    next_expiry: float
    def __new__(cls, trace_type: type, traces: TraceTable, sessions: SessionTable, reorder: ReorderHold | None,
                labels: Sequence[str], escalation_routes: frozenset[str], answered_labels: set[tuple[str | None, ...]],
                pending: dict[str, object], *, clock: Callable[[], float], expire: Callable[[float], None],
                feedback: Callable[[_Event, float, int], None], answered: Callable[[tuple[str | None, ...]], None],
                met: Callable[[str, object, Turn, int], None]) -> Self: ...
    def process(self, envelope: _Envelope) -> _Envelope: ...  # the stage
    def trace(self, event: _Event, fallback: bool, now: float, partition: int) -> None: ...  # a trace read back

# The feedback join's sessions (native/src/sessions.rs) and the turn classification (native/src/questions.rs;
# feedback/satisfaction.py). A question's analysis: its normalised text, terms and named things.
_Analysis: TypeAlias = tuple[str, frozenset[str], frozenset[str]]

def normalised(question: str) -> str: ...
def named_things(question: str) -> frozenset[str]: ...
def turn_kind(previous: _Analysis, question: _Analysis, threshold: float) -> str: ...

# The pipeline's loop (native/src/pipeline.rs; collector/pipeline.py): stages and exporters as (name, callable)
# pairs; failed(name, envelope, error) hears of a component's Exception.
def run_stages(batch: Iterable[_Envelope], stages: list[tuple[str, Callable[[_Envelope], _Envelope | None]]],
               exporters: list[tuple[str, Callable[[_Envelope], None]]], trace_type: type, traces: FastCounter,
               feedback: FastCounter, *, failed: Callable[[str, _Envelope, Exception], None]) -> None: ...

# The fallback stage's batch by the events' fields (native/src/fallback.rs; scorers/fallback.py `prepare`): each decided
# trace's rule set on its envelope; returns the undecided envelopes, their answers joined by "\n" (with `join`) and
# where each starts there.
def fallback_fields(batch: Iterable[_Envelope], trace_type: type, explicit: str, empty: str, *, empty_retrieval: bool,
                    rules: bool, join: bool) -> tuple[list[_Envelope], bytes | None, list[int]]: ...

@final
class SessionView:  # a session as tests read it
    last_at: float
    question: str
    analysis: _Analysis | None
    turns: tuple[Turn, ...]  # open answers, oldest first
    size: int
    partition: int
    released: float

@final
class SessionTable:
    def __new__(cls, max_sessions: int, max_bytes: int, entry_bytes: int, max_turns: int, idle_seconds: float,
                rephrase_window_seconds: float, escalation_routes: frozenset[str], evicted_sessions: FastCounter,
                evicted_turns: FastCounter, analyser: TextAnalyser, question_entries: int, question_bytes: int,
                rephrase_similarity: float, evicted_questions: FastCounter, signal: Callable[[Turn, str], None],
                close: Callable[[Turn, bool], None], *, kinds: dict[str, FastCounter]) -> Self: ...
    def turn(self, session_id: str, route: str | None, query: str, turn: Turn, now: float,
             timestamp: float | None = None) -> None: ...
    def expire(self, now: float) -> None: ...
    def revoke(self, partitions: set[int] | frozenset[int]) -> int: ...
    def last(self, session_id: str) -> tuple[Turn, int] | None: ...  # its last open answer, its partition
    def released(self, session_id: str) -> float | None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: str, /) -> SessionView: ...
    def items(self) -> list[tuple[str, SessionView]]: ...  # least recently used first
    @property
    def bytes(self) -> int: ...
    counting: bool  # false while the join replays: a closed answer without a signal is not counted, nor called back

# The dedup window and its stage (native/src/dedup.rs; collector/dedup.py wires it): identities are ints (others are
# keyed by their hash); evicted and the duplicates are prometheus_client Counters.
@final
class DedupCore:
    def __new__(cls, max_entries: int, window: float, clock: Callable[[], float], evicted: FastCounter, trace_type: type,
                trace_duplicates: object, feedback_duplicates: object) -> Self: ...
    def sharing(self, trace_duplicates: object, feedback_duplicates: object) -> DedupCore: ...  # the same window
    def seen_before(self, key: object) -> bool: ...
    def process(self, envelope: _Envelope) -> _Envelope | None: ...  # the stage
    def __len__(self) -> int: ...
    def items(self) -> list[tuple[int, float]]: ...  # oldest first

# The probe traffic filter's stage (native/src/probe.rs; probes/marker.py wires it): dropped(envelope) counts a probe event.
@final
class ProbeCore:
    def __new__(cls, attribute: str, dropped: Callable[[_Envelope], None]) -> Self: ...
    def process(self, envelope: _Envelope) -> _Envelope | None: ...  # the stage

# The fast-path exporter's trace samples (native/src/export.rs; exporters/prometheus.py wires it): series(raw label
# values) is the exporter's _Series of that label set, read once into an ExportSeries; count_overflow the guard's.
@final
class ExportSeries: ...

@final
class ExporterCore:
    def __new__(cls, trace_type: type, labels: Sequence[str], max_cached: int, *,
                series: Callable[[tuple[str | None, ...]], object], count_overflow: Callable[[tuple[str, ...]], None],
                feedback: Callable[[_Event], None]) -> Self: ...
    def export(self, envelope: _Envelope) -> None: ...  # the exporter

@final
class FastCounter:
    def __new__(cls) -> Self: ...
    def inc(self, amount: float = 1.0) -> None: ...
    @property
    def value(self) -> float: ...

@final
class FastHistogram:
    def __new__(cls, bounds: Sequence[float]) -> Self: ...
    def observe(self, value: float) -> None: ...
    @property
    def counts(self) -> list[int]: ...  # each bucket's own count, the +Inf bucket last
    @property
    def sum(self) -> float: ...
