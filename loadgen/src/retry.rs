//! What a client does with `429 Too Many Requests` (and a 5xx carrying `Retry-After`): the
//! behaviour of client-go's REST client, written here from its documented rules. A response
//! asking the client to wait (status 429 or >= 500 with an integer `Retry-After` in seconds) is
//! retried after that many seconds, at most `max_retries` times; then the client gives up and the
//! caller sees the error. loadgen adds a per-client cap on one wait and a jitter, so that
//! hundreds of clients refused in the same instant do not all come back in the same instant.
//!
//! Watch (re)connects follow the same waits but are never given up (as a reflector keeps
//! re-establishing its watch); the caller decides that by not counting attempts.
//! Invariant: pure arithmetic; the random draw and the clock are the caller's arguments, so
//! every decision is reproducible in tests.

use std::time::Duration;

use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};

/// How clients handle responses that ask them to wait (`[client]` in a scenario).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Wait the server's `Retry-After` and send the same request again (client-go's
    /// behaviour). When false, a 429 is an error and the client moves on to its next request at
    /// once (the worst case for the server).
    #[serde(default = "default_true")]
    pub honour_retry_after: bool,
    /// Retries of one request before giving up (client-go's default is 10). Watch reconnects
    /// are not limited.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Longest single wait, whatever the server asks (seconds).
    #[serde(default = "default_retry_after_max_s")]
    pub retry_after_max_s: f64,
    /// Each wait is lengthened by up to this fraction of itself, uniformly at random.
    #[serde(default = "default_jitter")]
    pub jitter: f64,
}

fn default_true() -> bool {
    true
}
fn default_max_retries() -> u32 {
    10
}
fn default_retry_after_max_s() -> f64 {
    10.0
}
fn default_jitter() -> f64 {
    0.2
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            honour_retry_after: true,
            max_retries: default_max_retries(),
            retry_after_max_s: default_retry_after_max_s(),
            jitter: default_jitter(),
        }
    }
}

/// What to do with one response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Not a "wait" response: the caller handles it (success or error).
    Done,
    /// Send the same request again after this long.
    RetryAfter(Duration),
    /// A "wait" response, but the client does not retry (disabled, or out of retries).
    GiveUp,
}

/// The server's request to wait: `Some(seconds)` for 429 or 5xx with an integer `Retry-After`
/// (client-go ignores an HTTP-date or a malformed value, and so does this).
pub fn asked_wait(status: StatusCode, headers: &HeaderMap) -> Option<u64> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok()
}

impl RetryPolicy {
    /// Checks the values make sense; errors name the field.
    pub fn validate(&self) -> anyhow::Result<()> {
        if !(self.retry_after_max_s >= 0.0 && self.retry_after_max_s.is_finite()) {
            anyhow::bail!("client.retry_after_max_s must be 0 or positive");
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            anyhow::bail!("client.jitter must be in [0, 1]");
        }
        Ok(())
    }

    /// The wait for `asked` seconds: capped, then lengthened by `unit` (a draw in [0, 1)) times
    /// the jitter fraction.
    pub fn wait(&self, asked_s: u64) -> impl Fn(f64) -> Duration + '_ {
        move |unit: f64| {
            let base = (asked_s as f64).min(self.retry_after_max_s);
            let unit = unit.clamp(0.0, 1.0);
            Duration::from_secs_f64(base * (1.0 + self.jitter * unit))
        }
    }

    /// The decision for a response with `asked` (from [`asked_wait`]) after `retries` retries of
    /// the same request (`None`: unlimited, for watches); `unit` is a random draw in [0, 1).
    pub fn decide(&self, asked: Option<u64>, retries: Option<u32>, unit: f64) -> Decision {
        let Some(asked_s) = asked else { return Decision::Done };
        if !self.honour_retry_after || retries.is_some_and(|r| r >= self.max_retries) {
            return Decision::GiveUp;
        }
        Decision::RetryAfter(self.wait(asked_s)(unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(retry_after: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = retry_after {
            h.insert(http::header::RETRY_AFTER, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_429_and_5xx_with_integer_seconds_ask_to_wait() {
        let cases: &[(u16, Option<&str>, Option<u64>)] = &[
            (429, Some("1"), Some(1)),
            (429, Some(" 3 "), Some(3)),
            (503, Some("2"), Some(2)),
            (500, Some("0"), Some(0)),
            (429, None, None),
            (429, Some("Wed, 21 Oct 2015 07:28:00 GMT"), None),
            (429, Some("-1"), None),
            (409, Some("1"), None),
            (200, Some("1"), None),
        ];
        for &(status, header, want) in cases {
            let got = asked_wait(StatusCode::from_u16(status).unwrap(), &headers(header));
            assert_eq!(got, want, "{status} {header:?}");
        }
    }

    #[test]
    fn retries_up_to_the_bound_then_gives_up() {
        let p = RetryPolicy { max_retries: 3, jitter: 0.0, ..Default::default() };
        assert_eq!(p.decide(None, Some(0), 0.5), Decision::Done);
        for r in 0..3 {
            assert_eq!(p.decide(Some(1), Some(r), 0.5), Decision::RetryAfter(Duration::from_secs(1)), "retry {r}");
        }
        assert_eq!(p.decide(Some(1), Some(3), 0.5), Decision::GiveUp);
        // Watches: never given up.
        assert_eq!(p.decide(Some(2), None, 0.5), Decision::RetryAfter(Duration::from_secs(2)));
        let off = RetryPolicy { honour_retry_after: false, ..Default::default() };
        assert_eq!(off.decide(Some(1), Some(0), 0.5), Decision::GiveUp);
        assert_eq!(off.decide(None, Some(0), 0.5), Decision::Done);
    }

    #[test]
    fn waits_are_capped_and_jittered_within_bounds() {
        let p = RetryPolicy { retry_after_max_s: 5.0, jitter: 0.5, ..Default::default() };
        let w = p.wait(60);
        assert_eq!(w(0.0), Duration::from_secs(5), "capped");
        assert_eq!(w(1.0), Duration::from_secs_f64(7.5));
        let w = p.wait(2);
        for i in 0..100 {
            let d = w(i as f64 / 100.0);
            assert!(d >= Duration::from_secs(2) && d < Duration::from_secs(3), "{d:?}");
        }
        // Out-of-range draws are clamped, never negative or beyond the jitter.
        assert_eq!(w(-3.0), Duration::from_secs(2));
        assert_eq!(w(9.0), Duration::from_secs(3));
        // Retry-After: 0 retries at once.
        assert_eq!(p.wait(0)(0.7), Duration::ZERO);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = RetryPolicy { jitter: 2.0, ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("client.jitter"));
        let bad = RetryPolicy { retry_after_max_s: f64::NAN, ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("retry_after_max_s"));
        assert!(RetryPolicy::default().validate().is_ok());
    }
}
