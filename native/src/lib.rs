//! ragpulse._native: the compiled core behind ragpulse's Python API (README "Packaging"). Each area's bindings sit
//! beside its algorithm (`<area>/bindings.rs`); this is the module's registration, its whole Python surface, which
//! _native.pyi types (tests/test_native_stub.py holds the two together).
use pyo3::prelude::*;

mod align;
mod bridge;
mod chunk;
mod citations;
mod clause;
mod dedup;
mod draw;
mod export;
mod fallback;
mod fields;
mod floor;
mod gate;
mod join;
mod kept;
mod lexical;
mod lines;
mod made;
mod metrics;
mod otlp;
mod otlp_json;
mod pipeline;
mod policy;
mod probe;
mod questions;
mod reorder;
mod sampler;
mod series;
mod sessions;
mod simplified;
mod split;
mod traces;
mod verdict;

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(otlp::bindings::decode_otlp_traces, module)?)?;
    module.add_function(wrap_pyfunction!(otlp::bindings::decode_otlp_json, module)?)?;
    module.add_function(wrap_pyfunction!(clause::bindings::stem_words, module)?)?;
    module.add_function(wrap_pyfunction!(clause::bindings::regex_spans, module)?)?;
    module.add_function(wrap_pyfunction!(clause::bindings::cjk_covered, module)?)?;
    module.add_function(wrap_pyfunction!(clause::bindings::sentences, module)?)?;
    module.add_function(wrap_pyfunction!(clause::bindings::clauses, module)?)?;
    module.add_function(wrap_pyfunction!(chunk::bindings::topics_shared, module)?)?;
    module.add_function(wrap_pyfunction!(citations::bindings::count_inline, module)?)?;
    module.add_function(wrap_pyfunction!(citations::bindings::parse_citations, module)?)?;
    module.add_function(wrap_pyfunction!(citations::bindings::scan_citations, module)?)?;
    module.add_function(wrap_pyfunction!(sampler::draw_of, module)?)?;
    module.add_function(wrap_pyfunction!(questions::normalised_of, module)?)?;
    module.add_function(wrap_pyfunction!(questions::named_things_of, module)?)?;
    module.add_function(wrap_pyfunction!(questions::turn_kind_of, module)?)?;
    module.add_function(wrap_pyfunction!(pipeline::run_stages, module)?)?;
    module.add_function(wrap_pyfunction!(fallback::fallback_fields, module)?)?;
    module.add("CITATION_MAX_MARKERS", citations::MAX_MARKERS)?;
    module.add("CITATION_MAX_RANGE", citations::MAX_RANGE)?;
    module.add_class::<chunk::bindings::PyChunk>()?;
    module.add_class::<chunk::bindings::PyContext>()?;
    module.add_class::<citations::stage::CitationCore>()?;
    module.add_class::<lexical::bindings::LexicalAnalyser>()?;
    module.add_class::<lexical::stage::LexicalCore>()?;
    module.add_class::<lexical::bindings::LexicalUnits>()?;
    module.add_class::<dedup::DedupCore>()?;
    module.add_class::<probe::ProbeCore>()?;
    module.add_class::<export::ExporterCore>()?;
    module.add_class::<export::ExportSeries>()?;
    module.add_class::<metrics::FastCounter>()?;
    module.add_class::<metrics::FastHistogram>()?;
    module.add_class::<otlp::bindings::KeyFilter>()?;
    module.add_class::<otlp::roles::RoleRules>()?;
    module.add_class::<otlp::texts::TextCache>()?;
    module.add_class::<reorder::bindings::ReorderHold>()?;
    module.add_class::<floor::RoutineFloor>()?;
    module.add_class::<gate::WordGate>()?;
    module.add_class::<gate::WordGates>()?;
    module.add_class::<gate::Substrings>()?;
    module.add_class::<join::JoinCore>()?;
    module.add_class::<kept::KeptTexts>()?;
    module.add_class::<lines::TraceLines>()?;
    module.add_class::<made::TextTable>()?;
    module.add_class::<clause::bindings::TextAnalyser>()?;
    module.add_class::<clause::memo::StemMemo>()?;
    module.add_class::<verdict::bindings::VerdictRules>()?;
    module.add_class::<policy::PolicyCore>()?;
    module.add_class::<sampler::SamplerCore>()?;
    module.add_class::<sessions::SessionTable>()?;
    module.add_class::<sessions::SessionView>()?;
    module.add_class::<traces::bindings::TraceTable>()?;
    module.add_class::<traces::bindings::Turn>()?;
    traces::bindings::keep_turns_out_of_the_collector(module.py());
    Ok(())
}
