//! The dictation routes (`/v1/dictation/start|stop|status|transcription`) and the Recorder
//! routes (`/v1/recorder/start|stop|status|session`): their bodies and answers.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::history::HistoryEntry;
use super::{upper_uuid, upper_uuid_opt};

/// `POST /v1/dictation/start` body: an optional workflow (rule) id. The server also takes an
/// empty body; it refuses a `workflow_id` that is not a UUID, so the client sends it as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartDictation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<String>,
}

/// `POST /v1/dictation/start`: the new session, recording, with the workflow it uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DictationStarted {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    /// `recording`.
    pub status: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "upper_uuid_opt"
    )]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_name: Option<String>,
}

/// A session and where it stands: `POST /v1/dictation/stop` (`stopped`),
/// `POST /v1/recorder/start` (`recording`) and `POST /v1/recorder/stop` (`finalizing`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    pub status: String,
}

/// `GET /v1/dictation/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DictationStatus {
    pub state: String,
    pub is_recording: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_workflow: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "upper_uuid_opt"
    )]
    pub active_workflow_id: Option<Uuid>,
}

/// `GET /v1/dictation/transcription?id=`: a dictation session as polled. Its transcript is
/// its history entry, whose id is the session's: the wire leaves it out of `transcription`,
/// and reading the answer puts the session's id back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DictationSession {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    /// `recording`, `processing`, `completed` or `failed`.
    pub status: String,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "entry_without_id"
    )]
    pub transcription: Option<HistoryEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The entry as a JSON object without its `id`.
fn entry_without_id<S: Serializer>(
    entry: &Option<HistoryEntry>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut value = serde_json::to_value(entry).map_err(serde::ser::Error::custom)?;
    if let Value::Object(fields) = &mut value {
        fields.remove("id");
    }
    value.serialize(serializer)
}

impl<'de> Deserialize<'de> for DictationSession {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Polled {
            id: Uuid,
            status: String,
            #[serde(default)]
            transcription: Option<Map<String, Value>>,
            #[serde(default)]
            error: Option<String>,
        }
        let polled = Polled::deserialize(deserializer)?;
        let transcription = polled
            .transcription
            .map(|mut fields| {
                fields.insert("id".into(), Value::String(polled.id.to_string()));
                serde_json::from_value(Value::Object(fields))
            })
            .transpose()
            .map_err(D::Error::custom)?;
        Ok(DictationSession {
            id: polled.id,
            status: polled.status,
            transcription,
            error: polled.error,
        })
    }
}

/// `GET /v1/recorder/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecorderStatus {
    pub recording: bool,
}

/// `GET /v1/recorder/session?id=`: a Recorder session as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecorderSession {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dictation_transcript_leaves_out_the_entry_id_and_reads_it_back() {
        let json = r#"{"id":"0F8FAD5B-D9CB-469F-A165-70867728950E","status":"completed","transcription":{"duration":1.0,"engine":"whisper","raw_text":"hi","text":"Hi","timestamp":"2026-04-13T10:15:00Z","words_count":1}}"#;
        let session: DictationSession = serde_json::from_str(json).unwrap();
        let entry = session.transcription.as_ref().unwrap();
        assert_eq!(entry.id, session.id);
        let again = serde_json::to_value(&session).unwrap();
        assert_eq!(again, serde_json::from_str::<Value>(json).unwrap());
    }

    #[test]
    fn optional_fields_are_omitted_not_null() {
        let id = Uuid::nil();
        let started = DictationStarted {
            id,
            status: "recording".into(),
            workflow_id: None,
            workflow_name: None,
        };
        let json = serde_json::to_string(&started).unwrap();
        assert_eq!(
            json,
            r#"{"id":"00000000-0000-0000-0000-000000000000","status":"recording"}"#
        );
        let body = serde_json::to_string(&StartDictation::default()).unwrap();
        assert_eq!(body, "{}");
    }
}
