//! ragpulse._native: the compiled core behind ragpulse's Python API (README "Packaging").
use pyo3::prelude::*;

/// English Snowball stems of `words`, as PyStemmer's "english" stemmer gives them.
#[pyfunction]
fn stem_words(words: Vec<String>) -> Vec<String> {
    let stemmer = snowstem::Stemmer::create(snowstem::Algorithm::English);
    words.iter().map(|word| stemmer.stem(word).to_string()).collect()
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(stem_words, module)?)?;
    Ok(())
}
