//! Progress on standard error, drawn only when it is a terminal: bars for downloads and counted
//! work, and the transcription bar the streamed segments move. Standard output never sees any,
//! so a pipe gets the result alone.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::wire::subtitles;
use crate::wire::transcription::TranscriptionSegment;

/// Whether bars are drawn at all.
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

fn styled(length: u64, template: &str) -> ProgressBar {
    let target = if stderr_is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    ProgressBar::with_draw_target(Some(length), target).with_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    )
}

/// A transfer or conversion measured in bytes (its length set once known).
pub fn bytes_bar(message: String) -> ProgressBar {
    let bar = styled(0, "{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})");
    bar.set_message(message);
    bar
}

/// `length` items of work, counted.
pub fn count_bar(length: u64, message: String) -> ProgressBar {
    let bar = styled(
        length,
        "{msg} [{bar:30}] {pos}/{len} ({elapsed}, {eta} left)",
    );
    bar.set_message(message);
    bar
}

/// A line on standard error: above the bar on a terminal, as a plain line otherwise.
pub fn note(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// The transcription of audio lasting `duration` seconds: a bar at the end of the last decoded
/// segment, each segment's line printed above it. Without a duration, a spinner with the time
/// spent. Cleared when dropped, whatever the outcome.
pub struct TranscriptionBar {
    bar: ProgressBar,
}

impl TranscriptionBar {
    pub fn new(duration: Option<f64>) -> TranscriptionBar {
        let bar = match duration.filter(|d| d.is_finite() && *d > 0.0) {
            Some(duration) => styled(
                (duration * 1000.0).round() as u64,
                "Transcribing [{bar:30}] {percent:>3}% of the audio ({elapsed}, {msg})",
            ),
            None => styled(0, "{spinner} Transcribing ({elapsed}) {msg}"),
        };
        if bar.length().is_some_and(|length| length > 0) {
            bar.set_message("estimating the time left");
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        TranscriptionBar { bar }
    }

    /// The bar itself, to clear from elsewhere (Ctrl-C).
    pub fn handle(&self) -> ProgressBar {
        self.bar.clone()
    }

    /// A decoded segment: its line above the bar, the bar at its end, and the time left as the
    /// pace so far gives it.
    pub fn segment(&self, segment: &TranscriptionSegment) {
        let end = (segment.end.max(0.0) * 1000.0).round() as u64;
        match self.bar.length() {
            Some(length) if length > 0 => {
                let done = end.min(length);
                self.bar.set_position(done);
                self.bar
                    .set_message(time_left(self.bar.elapsed(), done, length));
            }
            _ => self
                .bar
                .set_message(format!("{} heard", subtitles::timestamp(segment.end, '.'))),
        }
        note(&self.bar, &segment_line(segment));
    }
}

/// "about 1m 20s left": `elapsed` spent on `done` of `length` (milliseconds of audio), the rest
/// at the same pace.
fn time_left(elapsed: Duration, done: u64, length: u64) -> String {
    if done == 0 {
        return "estimating the time left".into();
    }
    let left = elapsed.as_secs_f64() * (length - done) as f64 / done as f64;
    let seconds = left.round() as u64;
    match seconds {
        0 => "almost done".into(),
        s if s < 60 => format!("about {s}s left"),
        s => format!("about {}m {:02}s left", s / 60, s % 60),
    }
}

impl Drop for TranscriptionBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// `[00:00:01.000] text`: how a segment is shown on standard error.
pub fn segment_line(segment: &TranscriptionSegment) -> String {
    format!(
        "[{}] {}",
        subtitles::timestamp(segment.start, '.'),
        segment.text.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_follows_the_pace_so_far() {
        let elapsed = Duration::from_secs(10);
        assert_eq!(time_left(elapsed, 0, 600_000), "estimating the time left");
        // A quarter of the audio in 10 s: 30 s more.
        assert_eq!(time_left(elapsed, 150_000, 600_000), "about 30s left");
        assert_eq!(time_left(elapsed, 60_000, 600_000), "about 1m 30s left");
        assert_eq!(time_left(elapsed, 600_000, 600_000), "almost done");
    }
}
