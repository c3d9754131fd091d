//! The checks, one module per area (`transcribe_results` holds the transcription successes,
//! `corrections` the dictionary's corrections).

mod auth;
mod backup;
mod corrections;
mod dictation;
mod dictionary;
mod discovery;
mod errors;
mod history;
mod limits;
mod models;
mod openai;
mod recorder;
mod rules;
mod security;
mod status;
mod transcribe;
mod transcribe_results;
mod wire;

use super::Check;

/// Every check, area by area in [`super::Area`]'s order.
pub fn all() -> Vec<Check> {
    let mut checks = Vec::new();
    for area in [
        wire::checks,
        errors::checks,
        status::checks,
        models::checks,
        auth::checks,
        security::checks,
        limits::checks,
        transcribe::checks,
        openai::checks,
        history::checks,
        dictionary::checks,
        rules::checks,
        backup::checks,
        dictation::checks,
        recorder::checks,
        discovery::checks,
    ] {
        checks.extend(area());
    }
    checks
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_areas_in_order() {
        let checks = super::all();
        let mut seen = HashSet::new();
        for check in &checks {
            assert!(seen.insert(check.id), "{} twice", check.id);
        }
        assert!(checks.windows(2).all(|w| w[0].area <= w[1].area));
        assert!(checks.len() >= 120, "{} checks", checks.len());
    }
}
