//! The fast path's counter and histogram children (collector/telemetry/fast_metrics.py): about ten updates an
//! event, each a Python method call; here an update is an atomic add on plain numbers. The families (labels,
//! exposition) stay in Python and read these at scrape time.
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// An f64 in an AtomicU64's bits: added to without a lock, from any thread.
struct AtomicF64(AtomicU64);

impl AtomicF64 {
    fn new() -> Self {
        AtomicF64(AtomicU64::new(0f64.to_bits()))
    }

    fn add(&self, amount: f64) {
        // fetch_update retries when another thread added in between: no update is lost.
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
            Some((f64::from_bits(bits) + amount).to_bits())
        });
    }

    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
}

#[pyclass(frozen, module = "ragpulse._native")]
pub struct FastCounter {
    value: AtomicF64,
}

impl FastCounter {
    /// An update from the crate's own state (the join's counters).
    pub fn add(&self, amount: f64) {
        self.value.add(amount);
    }
}

#[pymethods]
impl FastCounter {
    #[new]
    fn new() -> Self {
        FastCounter { value: AtomicF64::new() }
    }

    #[pyo3(signature = (amount = 1.0))]
    fn inc(&self, amount: f64) {
        self.value.add(amount);
    }

    #[getter]
    fn value(&self) -> f64 {
        self.value.get()
    }
}

/// Prometheus buckets ("le": a value counts in the first bucket whose bound is at least it) and the +Inf bucket.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct FastHistogram {
    bounds: Vec<f64>,
    counts: Vec<AtomicU64>,
    sum: AtomicF64,
}

#[pymethods]
impl FastHistogram {
    #[new]
    fn new(bounds: Vec<f64>) -> PyResult<Self> {
        if !bounds.windows(2).all(|pair| pair[0] < pair[1]) {
            return Err(PyValueError::new_err(format!("histogram bounds must increase: {bounds:?}")));
        }
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Ok(FastHistogram { bounds, counts, sum: AtomicF64::new() })
    }

    pub(crate) fn observe(&self, value: f64) {
        // Python's bisect_left: the first bound not below the value; a NaN compares below nothing (bucket 0).
        let bucket = self.bounds.partition_point(|bound| *bound < value);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum.add(value);
    }

    /// Each bucket's own count (not cumulative), the +Inf bucket last.
    #[getter]
    fn counts(&self) -> Vec<u64> {
        self.counts.iter().map(|count| count.load(Ordering::Relaxed)).collect()
    }

    #[getter]
    fn sum(&self) -> f64 {
        self.sum.get()
    }
}

#[cfg(test)]
mod tests {
    use super::AtomicF64;

    #[test]
    fn adds_from_many_threads_lose_nothing() {
        let total = AtomicF64::new();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| (0..10_000).for_each(|_| total.add(0.5)));
            }
        });
        assert_eq!(total.get(), 20_000.0);
    }
}
