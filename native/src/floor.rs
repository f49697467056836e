//! ragpulse._native.RoutineFloor: the floor under the routine sample, per app (judging/routine_floor.py says why and
//! how it counts). Every judgeable trace asks it once, from the judge sampler's core, which calls it here directly.
use std::collections::VecDeque;

use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use rustc_hash::FxHashMap;

const BUCKET_SECONDS: f64 = 10.0;
const BUCKETS: i64 = 6; // a minute
const EVERY: f64 = 64.0; // traces (scaled) between estimates within a bucket...
const FIRST_EVERY_SECONDS: f64 = 1.0; // ...or this long, before an app's first bucket closes

struct App {
    first_seen: f64,
    bucket: i64,
    count: f64, // traces in the current bucket, scaled to the whole app's
    closed: VecDeque<(i64, f64)>, // (bucket, traces) of the last minute's closed buckets
    closed_sum: f64,
    rate: f64,
    next_count: f64,
    next_at: f64,
}

impl App {
    fn new(now: f64, bucket: i64) -> Self {
        let mut app = App { first_seen: now, bucket, count: 0.0, closed: VecDeque::new(), closed_sum: 0.0, rate: 0.0,
                            next_count: EVERY, next_at: now };
        app.start(now);
        app
    }

    /// Counting from scratch: the app is new, or back after a minute without traffic.
    fn start(&mut self, now: f64) {
        self.first_seen = now;
        self.count = 0.0;
        self.rate = 0.0; // no raise until a first estimate
        self.next_count = EVERY;
        self.next_at = now + FIRST_EVERY_SECONDS;
    }
}

/// Python's float floor division (`a // b`), to the bit.
fn floor_div(a: f64, b: f64) -> f64 {
    let rest = a % b;
    let mut div = (a - rest) / b;
    if rest != 0.0 && ((b < 0.0) != (rest < 0.0)) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0_f64.copysign(a / b);
    }
    let floored = div.floor();
    if div - floored > 0.5 { floored + 1.0 } else { floored }
}

#[pyclass(module = "ragpulse._native")]
pub struct RoutineFloor {
    per_minute: f64,
    clock: Option<Py<PyAny>>, // None once the garbage collector cleared it
    max_apps: usize,
    apps: FxHashMap<Option<String>, App>,
    /// What one trace seen here stands for of the whole app's traffic: judge.replicas, or total / owned partitions.
    #[pyo3(get, set)]
    scale: f64,
}

/// The routine rate that gives `asked` judgments a minute out of `per_minute` traces (1 when there is no traffic).
fn floor(asked: f64, per_minute: f64) -> f64 {
    if per_minute > 0.0 { (asked / per_minute).min(1.0) } else { 1.0 }
}

impl App {
    fn close(&mut self, asked: f64, bucket: i64, now: f64) {
        let held = self;
        held.closed.push_back((held.bucket, held.count));
        held.closed_sum += held.count;
        while held.closed.front().is_some_and(|(closed, _)| *closed < bucket - BUCKETS) {
            held.closed_sum -= held.closed.pop_front().expect("a closed bucket").1; // the six buckets before this one
        }
        (held.bucket, held.count, held.next_count) = (bucket, 0.0, EVERY);
        if held.closed.is_empty() {
            // a minute or more without traffic: estimated afresh, as a new app is (and rounding gone)
            held.closed_sum = 0.0;
            held.start(now);
            return;
        }
        let span = (BUCKETS as f64 * BUCKET_SECONDS).min(BUCKET_SECONDS.max(now - held.first_seen));
        held.rate = floor(asked, held.closed_sum * 60.0 / span);
    }
}

impl RoutineFloor {
    /// Counts one judgeable trace of `app` and returns its routine rate.
    pub fn rate_of(&mut self, py: Python<'_>, app: Option<&str>, base_rate: f64) -> PyResult<f64> {
        // A rate of 0 opts the app (or route) out of the routine sample.
        let Some(clock) = self.clock.as_ref().filter(|_| self.per_minute > 0.0 && base_rate > 0.0) else {
            return Ok(base_rate);
        };
        let now: f64 = clock.call0(py)?.extract(py)?;
        let bucket = floor_div(now, BUCKET_SECONDS) as i64;
        let key = app.map(str::to_owned);
        if !self.apps.contains_key(&key) && self.apps.len() >= self.max_apps {
            self.apps.clear(); // bounded: a flood of app names starts the counts over
        }
        let (asked, scale) = (self.per_minute, self.scale);
        let held = self.apps.entry(key).or_insert_with(|| App::new(now, bucket));
        if bucket != held.bucket {
            held.close(asked, bucket, now);
        }
        held.count += scale;
        if held.count >= held.next_count || (now >= held.next_at && held.closed.is_empty()) {
            (held.next_count, held.next_at) = (held.count + EVERY, now + FIRST_EVERY_SECONDS);
            // The last minute's closed buckets and this one so far, over the time they cover (at least a second).
            let since = held.first_seen.max((bucket - BUCKETS) as f64 * BUCKET_SECONDS);
            held.rate = floor(asked, (held.closed_sum + held.count) * 60.0 / (now - since).max(1.0));
        }
        Ok(base_rate.max(held.rate))
    }
}

#[pymethods]
impl RoutineFloor {
    #[new]
    #[pyo3(signature = (per_minute, clock, max_apps, *, scale = 1.0))]
    fn new(per_minute: i64, clock: Py<PyAny>, max_apps: usize, scale: f64) -> Self {
        RoutineFloor { per_minute: per_minute as f64, clock: Some(clock), max_apps, apps: FxHashMap::default(), scale }
    }

    /// A Kafka consumer's share of its topics' partitions, after a rebalance (none owned: nothing to count).
    fn set_partition_share(&mut self, owned: i64, total: i64) {
        if 0 < owned && owned <= total {
            self.scale = total as f64 / owned as f64;
        }
    }

    /// Counts one judgeable trace of `app` and returns its routine rate.
    fn rate(&mut self, py: Python<'_>, app: Option<&str>, base_rate: f64) -> PyResult<f64> {
        self.rate_of(py, app, base_rate)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(clock) = &self.clock {
            visit.call(clock)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.clock = None;
    }
}
