//! The scenario file as written (serde, unknown keys refused) and its conversion into a checked
//! [`Scenario`], each error naming the dotted key it is about.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::check::{Check, MAX_SECONDS};
use super::{
    AppContext, DeviceSpec, EngineSpec, ModelState, SAMPLE_RATES, Scenario, ScenarioError,
};
use crate::device::{Faults, OverrunFault, Playback};
use crate::playlist::{After, Item};
use crate::replay::Latency;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    corpus: Option<PathBuf>,
    microphone: Option<RawDevice>,
    system_audio: Option<RawDevice>,
    engine: Option<RawEngine>,
    models: Option<toml::Table>,
    app_context: Option<RawAppContext>,
    chat: Option<super::chat::RawChat>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    present: Option<bool>,
    sample_rate: Option<i64>,
    items: Option<Vec<RawItem>>,
    after: Option<String>,
    playback: Option<String>,
    faults: Option<RawFaults>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItem {
    clip: Option<String>,
    silence: Option<f64>,
    tone: Option<f64>,
    seconds: Option<f64>,
    volume: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFaults {
    lost_after_seconds: Option<f64>,
    overruns: Option<Vec<RawOverrun>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverrun {
    at_seconds: f64,
    samples: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    selected_model: Option<String>,
    latency_seconds: Option<f64>,
    real_time_factor: Option<f64>,
    fail_requests: Option<Vec<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAppContext {
    app_name: Option<String>,
    app_id: Option<String>,
    url: Option<String>,
}

/// Parses `text`; `origin` names it in errors.
pub(super) fn parse(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = toml::from_str(text).map_err(|e| ScenarioError::Syntax {
        origin: origin.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    let check = Check::new(origin);
    Ok(Scenario {
        path: None,
        corpus: raw.corpus,
        microphone: check.device("microphone", raw.microphone)?,
        system_audio: check.device("system_audio", raw.system_audio)?,
        engine: check.engine(raw.engine)?,
        models: check.models(raw.models)?,
        app_context: raw
            .app_context
            .map_or_else(AppContext::default, |a| AppContext {
                app_name: a.app_name,
                app_id: a.app_id,
                url: a.url,
            }),
        chat: check.chat(raw.chat)?,
    })
}

impl Check<'_> {
    fn device(&self, name: &str, raw: Option<RawDevice>) -> Result<DeviceSpec, ScenarioError> {
        let mut spec = DeviceSpec::default();
        let Some(raw) = raw else { return Ok(spec) };
        spec.present = raw.present.unwrap_or(true);
        if let Some(rate) = raw.sample_rate {
            spec.sample_rate = u32::try_from(rate)
                .ok()
                .filter(|r| SAMPLE_RATES.contains(r))
                .ok_or_else(|| {
                    self.error(
                        format!("{name}.sample_rate"),
                        format!(
                            "{rate} Hz is not supported (from {} to {} Hz)",
                            SAMPLE_RATES.start(),
                            SAMPLE_RATES.end()
                        ),
                    )
                })?;
        }
        let rate = spec.sample_rate;
        for (n, item) in raw.items.unwrap_or_default().into_iter().enumerate() {
            spec.items
                .push(self.item(&format!("{name}.items[{n}]"), item, rate)?);
        }
        spec.after = match raw.after.as_deref() {
            None | Some("silence") => After::Silence,
            Some("loop") => After::Loop,
            Some(other) => {
                return Err(self.error(
                    format!("{name}.after"),
                    format!("expected \"silence\" or \"loop\", found \"{other}\""),
                ));
            }
        };
        spec.playback = match raw.playback.as_deref() {
            None | Some("restart") => Playback::Restart,
            Some("resume") => Playback::Resume,
            Some(other) => {
                return Err(self.error(
                    format!("{name}.playback"),
                    format!("expected \"restart\" or \"resume\", found \"{other}\""),
                ));
            }
        };
        if let Some(faults) = raw.faults {
            spec.faults = self.faults(&format!("{name}.faults"), faults, rate)?;
        }
        Ok(spec)
    }

    fn item(&self, key: &str, raw: RawItem, rate: u32) -> Result<Item, ScenarioError> {
        let given = [
            raw.clip.is_some(),
            raw.silence.is_some(),
            raw.tone.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() != 1 {
            return Err(self.error(key, "give exactly one of 'clip', 'silence' or 'tone'"));
        }
        let tone_only = |field: &str| {
            self.error(
                format!("{key}.{field}"),
                format!("'{field}' only goes with 'tone'"),
            )
        };
        if let Some(id) = raw.clip {
            if raw.seconds.is_some() {
                return Err(tone_only("seconds"));
            }
            if raw.volume.is_some() {
                return Err(tone_only("volume"));
            }
            if id.is_empty() {
                return Err(self.error(format!("{key}.clip"), "the clip id is empty"));
            }
            return Ok(Item::Clip(id));
        }
        if let Some(seconds) = raw.silence {
            if raw.seconds.is_some() {
                return Err(tone_only("seconds"));
            }
            if raw.volume.is_some() {
                return Err(tone_only("volume"));
            }
            return Ok(Item::Silence(
                self.seconds(&format!("{key}.silence"), seconds)?,
            ));
        }
        let hz = raw.tone.unwrap_or_default();
        let nyquist = f64::from(rate) / 2.0;
        if !(hz.is_finite() && hz > 0.0 && hz < nyquist) {
            return Err(self.error(
                format!("{key}.tone"),
                format!(
                    "{hz} Hz is not a frequency between 0 and {nyquist} Hz (half the sample rate)"
                ),
            ));
        }
        let seconds = raw
            .seconds
            .ok_or_else(|| self.error(format!("{key}.seconds"), "a tone needs 'seconds'"))?;
        let seconds = self.seconds(&format!("{key}.seconds"), seconds)?;
        let volume = raw.volume.unwrap_or(0.25);
        if !(0.0..=1.0).contains(&volume) {
            return Err(self.error(
                format!("{key}.volume"),
                format!("{volume} is not a volume from 0 to 1"),
            ));
        }
        Ok(Item::Tone {
            hz,
            seconds,
            volume: volume as f32,
        })
    }

    fn faults(&self, key: &str, raw: RawFaults, rate: u32) -> Result<Faults, ScenarioError> {
        let lost_after = raw
            .lost_after_seconds
            .map(|s| self.seconds(&format!("{key}.lost_after_seconds"), s))
            .transpose()?;
        let mut overruns: Vec<OverrunFault> = Vec::new();
        for (n, raw) in raw.overruns.unwrap_or_default().into_iter().enumerate() {
            let at_key = format!("{key}.overruns[{n}].at_seconds");
            let at = self.seconds(&at_key, raw.at_seconds)?;
            // Documented default: 100 ms of audio at the device's rate.
            let samples = raw.samples.unwrap_or(i64::from(rate / 10));
            if !(1..=i64::from(rate) * MAX_SECONDS as i64).contains(&samples) {
                return Err(self.error(
                    format!("{key}.overruns[{n}].samples"),
                    format!("{samples} is not a positive number of samples"),
                ));
            }
            if let Some(previous) = overruns.last() {
                let previous_end = previous.at + previous.samples as f64 / f64::from(rate);
                if at < previous_end {
                    return Err(self.error(
                        at_key,
                        format!(
                            "{at} s is before the end of the previous overrun ({previous_end} s)"
                        ),
                    ));
                }
            }
            overruns.push(OverrunFault {
                at,
                samples: samples as u64,
            });
        }
        Ok(Faults {
            lost_after,
            overruns,
        })
    }

    fn engine(&self, raw: Option<RawEngine>) -> Result<EngineSpec, ScenarioError> {
        let Some(raw) = raw else {
            return Ok(EngineSpec::default());
        };
        let latency = match (raw.latency_seconds, raw.real_time_factor) {
            (Some(_), Some(_)) => {
                return Err(self.error(
                    "engine.real_time_factor",
                    "give 'latency_seconds' or 'real_time_factor', not both",
                ));
            }
            (Some(s), None) => Latency::Fixed(self.seconds("engine.latency_seconds", s)?),
            (None, Some(f)) if f.is_finite() && (0.0..=1000.0).contains(&f) => {
                Latency::RealTimeFactor(f)
            }
            (None, Some(f)) => {
                return Err(self.error(
                    "engine.real_time_factor",
                    format!("{f} is not a factor from 0 to 1000"),
                ));
            }
            (None, None) => Latency::Recorded,
        };
        let mut fail_requests = Vec::new();
        for (n, request) in raw
            .fail_requests
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let request = u64::try_from(request)
                .ok()
                .filter(|&r| r >= 1)
                .ok_or_else(|| {
                    self.error(
                        format!("engine.fail_requests[{n}]"),
                        format!("{request} is not a request number (requests are numbered from 1)"),
                    )
                })?;
            fail_requests.push(request);
        }
        if raw.selected_model.as_deref() == Some("") {
            return Err(self.error("engine.selected_model", "the model id is empty"));
        }
        Ok(EngineSpec {
            selected_model: raw.selected_model,
            latency,
            fail_requests,
        })
    }

    fn models(
        &self,
        raw: Option<toml::Table>,
    ) -> Result<BTreeMap<String, ModelState>, ScenarioError> {
        let mut models = BTreeMap::new();
        for (id, value) in raw.unwrap_or_default() {
            let key = format!("models.\"{id}\"");
            let expected = "expected \"present\", \"absent\" or { download_seconds = N }";
            let state = match &value {
                toml::Value::String(s) if s == "present" => ModelState::Present,
                toml::Value::String(s) if s == "absent" => ModelState::Absent,
                toml::Value::Table(t) => {
                    if let Some(unknown) = t.keys().find(|k| *k != "download_seconds") {
                        return Err(self.error(
                            format!("{key}.{unknown}"),
                            format!("unknown key; {expected}"),
                        ));
                    }
                    let seconds = match t.get("download_seconds") {
                        Some(toml::Value::Float(f)) => *f,
                        Some(toml::Value::Integer(i)) => *i as f64,
                        _ => {
                            return Err(self.error(
                                format!("{key}.download_seconds"),
                                "expected a number of seconds",
                            ));
                        }
                    };
                    let seconds = self.seconds(&format!("{key}.download_seconds"), seconds)?;
                    ModelState::Download { seconds }
                }
                other => return Err(self.error(key, format!("{expected}, found {other}"))),
            };
            if id.is_empty() {
                return Err(self.error("models", "a model id is empty"));
            }
            models.insert(id, state);
        }
        Ok(models)
    }
}
