//! The run's report in three forms: text for people, JSON for programs, JUnit XML for CI
//! (one `<testsuite>` per area, valid against the Jenkins `junit-10.xsd` shape).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Area, Outcome};

/// One check's result.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub id: &'static str,
    pub area: Area,
    pub section: &'static str,
    pub quote: &'static str,
    pub outcome: Outcome,
    pub seconds: f64,
}

/// Every result of a run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The server's base URL.
    pub target: String,
    pub results: Vec<CheckResult>,
    pub seconds: f64,
}

/// Passed, failed and skipped checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Counts {
    fn of<'a>(results: impl IntoIterator<Item = &'a CheckResult>) -> Counts {
        let mut counts = Counts::default();
        for result in results {
            match result.outcome {
                Outcome::Pass => counts.passed += 1,
                Outcome::Fail(_) => counts.failed += 1,
                Outcome::Skip(_) => counts.skipped += 1,
            }
        }
        counts
    }

    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }
}

/// The report's formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Junit,
}

impl Report {
    pub fn counts(&self) -> Counts {
        Counts::of(&self.results)
    }

    /// The closing line: `N contract points checked: P passed, F failed, S skipped`.
    pub fn summary(&self) -> String {
        let c = self.counts();
        format!(
            "{} contract points checked: {} passed, {} failed, {} skipped",
            c.total(),
            c.passed,
            c.failed,
            c.skipped
        )
    }

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => {
                serde_json::to_string_pretty(&self.json()).expect("JSON of values") + "\n"
            }
            Format::Junit => self.junit(),
        }
    }

    /// For people: one line per check by area, failures with expected, observed and curl.
    pub fn text(&self) -> String {
        let mut out = format!("Verbatim conformance kit against {}\n", self.target);
        let mut area = None;
        for r in &self.results {
            if area != Some(r.area) {
                area = Some(r.area);
                let _ = writeln!(out, "\n{}", r.area);
            }
            match &r.outcome {
                Outcome::Pass => {
                    let _ = writeln!(out, "  pass  {}", r.id);
                }
                Outcome::Skip(why) => {
                    let _ = writeln!(out, "  skip  {}  ({why})", r.id);
                }
                Outcome::Fail(f) => {
                    let _ = writeln!(out, "  FAIL  {}  [{}: \"{}\"]", r.id, r.section, r.quote);
                    let _ = writeln!(out, "        expected: {}", f.expected);
                    let _ = writeln!(out, "        observed: {}", f.observed);
                    if let Some(curl) = &f.curl {
                        let _ = writeln!(out, "        reproduce: {curl}");
                    }
                }
            }
        }
        let _ = writeln!(out, "\n{} in {:.1} s", self.summary(), self.seconds);
        out
    }

    /// For programs: the summary and every check with its contract line and outcome.
    pub fn json(&self) -> Value {
        let c = self.counts();
        let checks: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                let mut check = json!({
                    "id": r.id,
                    "area": r.area.to_string(),
                    "contract": {"section": r.section, "quote": r.quote},
                    "seconds": (r.seconds * 1000.0).round() / 1000.0,
                });
                match &r.outcome {
                    Outcome::Pass => check["outcome"] = "pass".into(),
                    Outcome::Skip(why) => {
                        check["outcome"] = "skip".into();
                        check["why"] = why.as_str().into();
                    }
                    Outcome::Fail(f) => {
                        check["outcome"] = "fail".into();
                        check["expected"] = f.expected.as_str().into();
                        check["observed"] = f.observed.as_str().into();
                        if let Some(curl) = &f.curl {
                            check["curl"] = curl.as_str().into();
                        }
                    }
                }
                check
            })
            .collect();
        json!({
            "target": self.target,
            "summary": {
                "total": c.total(), "passed": c.passed, "failed": c.failed, "skipped": c.skipped,
                "seconds": (self.seconds * 1000.0).round() / 1000.0,
            },
            "checks": checks,
        })
    }

    /// JUnit XML: `<testsuites>` with one `<testsuite>` per area. The root carries no
    /// `skipped` count: the `junit-10.xsd` shape CI tools validate against has none there.
    pub fn junit(&self) -> String {
        let c = self.counts();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"verbatim conformance\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.3}\">",
            c.total(),
            c.failed,
            self.seconds
        );
        let mut areas: Vec<Area> = self.results.iter().map(|r| r.area).collect();
        areas.dedup();
        for area in areas {
            let results: Vec<&CheckResult> =
                self.results.iter().filter(|r| r.area == area).collect();
            let counts = Counts::of(results.iter().copied());
            let time: f64 = results.iter().map(|r| r.seconds).sum();
            let _ = writeln!(
                out,
                "  <testsuite name=\"{area}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{time:.3}\">",
                counts.total(),
                counts.failed,
                counts.skipped
            );
            for r in results {
                junit_case(&mut out, r);
            }
            out.push_str("  </testsuite>\n");
        }
        out.push_str("</testsuites>\n");
        out
    }
}

fn junit_case(out: &mut String, r: &CheckResult) {
    let open = format!(
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
        r.area,
        escape(r.id),
        r.seconds
    );
    let contract = format!("{}: \"{}\"", r.section, r.quote);
    match &r.outcome {
        Outcome::Pass => {
            let _ = writeln!(out, "{open}/>");
        }
        Outcome::Skip(why) => {
            let _ = writeln!(
                out,
                "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                escape(why)
            );
        }
        Outcome::Fail(f) => {
            let mut text = format!(
                "contract: {contract}\nexpected: {}\nobserved: {}",
                f.expected, f.observed
            );
            if let Some(curl) = &f.curl {
                let _ = write!(text, "\nreproduce: {curl}");
            }
            let _ = writeln!(
                out,
                "{open}>\n      <failure message=\"{}\" type=\"contract\">{}</failure>\n    </testcase>",
                escape(&format!("expected {}", f.expected)),
                escape(&text)
            );
        }
    }
}

/// Text safe inside XML attributes and elements; characters XML 1.0 forbids are dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Failure;

    fn report() -> Report {
        let result = |id, outcome| CheckResult {
            id,
            area: Area::Wire,
            section: "Wire conventions",
            quote: "q",
            outcome,
            seconds: 0.01,
        };
        Report {
            target: "http://127.0.0.1:1".into(),
            results: vec![
                result("wire.a", Outcome::Pass),
                result("wire.b", Outcome::Skip("why".into())),
                result(
                    "wire.c",
                    Outcome::Fail(Failure {
                        expected: "<200>".into(),
                        observed: "a\u{1}\"b\"".into(),
                        curl: Some("curl 'x'".into()),
                    }),
                ),
            ],
            seconds: 0.5,
        }
    }

    #[test]
    fn the_summary_counts_each_outcome() {
        assert_eq!(
            report().summary(),
            "3 contract points checked: 1 passed, 1 failed, 1 skipped"
        );
        assert_eq!(report().json()["summary"]["failed"], 1);
    }

    #[test]
    fn junit_escapes_what_xml_forbids() {
        let xml = report().junit();
        assert!(xml.contains("<failure message=\"expected &lt;200&gt;\" type=\"contract\">"));
        assert!(xml.contains("observed: a&quot;b&quot;"), "{xml}");
        assert!(xml.contains("<skipped message=\"why\"/>"));
        assert!(!xml.contains('\u{1}'));
    }
}
